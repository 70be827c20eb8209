package plugin_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
)

// Unstamped, the version is "dev"; the plugin logs it when it starts, with what its
// arguments switch on.
func TestVersionInTheStartLine(t *testing.T) {
	assert.Equal(t, "dev", plugin.Version, "a build without -ldflags -X …plugin.Version")
	c := startCluster(t, setup{})
	lines := c.logs.infos(plugin.Name, "FineGrain plugin started")
	require.Len(t, lines, 1)
	kv := map[any]any{}
	for i := 0; i+1 < len(lines[0].kv); i += 2 {
		kv[lines[0].kv[i]] = lines[0].kv[i+1]
	}
	assert.Equal(t, "dev", kv["version"])
	assert.Equal(t, schedulerName, kv["profile"])
	assert.Equal(t, false, kv["queues"])
}
