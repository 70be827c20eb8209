package finegrain

import (
	"fmt"

	"github.com/finegrain/finegrain/framework"
)

// The plugin list: adding, reordering and removing plugins.

// pluginEdit is one change to the default plugin list.
type pluginEdit struct {
	plugin framework.Plugin // to add; nil for a removal
	before string           // add before this plugin; "" appends
	remove string           // the plugin to remove
}

// WithPlugin adds p to the scheduler's plugins, after the built-in ones, at every
// extension point p implements (package framework: PreFilter, Filter, PostFilter,
// Score, Reserve, Permit, NodeGate, JobFilter, Pass; a DemandPlugin replaces the
// demand step). Options apply in order.
func WithPlugin(p framework.Plugin) Option {
	return func(c *config) error {
		if isNil(p) {
			return fmt.Errorf("finegrain: plugin is nil: %w", ErrInvalid)
		}
		c.edits = append(c.edits, pluginEdit{plugin: p})
		return nil
	}
}

// WithPluginBefore adds p just before the plugin named before, so that at every
// extension point both implement, p runs first: WithPluginBefore("StageMatch", f)
// filters before matching. New fails when no plugin is named before.
func WithPluginBefore(before string, p framework.Plugin) Option {
	return func(c *config) error {
		if isNil(p) || before == "" {
			return fmt.Errorf("finegrain: plugin %v before %q: %w", p, before, ErrInvalid)
		}
		c.edits = append(c.edits, pluginEdit{plugin: p, before: before})
		return nil
	}
}

// WithoutPlugin removes the plugin named name (a built-in one, listed by
// Scheduler.Plugins, or one added earlier); with WithPluginBefore it reorders. New
// fails when no plugin is named name.
func WithoutPlugin(name string) Option {
	return func(c *config) error {
		if name == "" {
			return fmt.Errorf("finegrain: plugin name is empty: %w", ErrInvalid)
		}
		c.edits = append(c.edits, pluginEdit{remove: name})
		return nil
	}
}
