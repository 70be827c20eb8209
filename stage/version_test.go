package stage_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/stage"
)

// TestTimelineVersion checks that Version moves with every change of the free amounts
// and with nothing else.
func TestTimelineVersion(t *testing.T) {
	tl, err := stage.NewTimeline(schema, tup(4000, 8000))
	require.NoError(t, err)
	p := stage.MustProfile(schema, stage.Stage{Duration: 2 * time.Second, Demand: tup(1000, 2000)})
	big := stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(1000, 9000)})
	v := tl.Version()
	steps := []struct {
		name    string
		do      func() error
		changes bool
	}{
		{"check", func() error { return tl.Check(0, p, tup(0, 0)) }, false},
		{"refused reserve", func() error { _, err := tl.Reserve(0, big, tup(0, 0)); assert.Error(t, err); return nil }, false},
		{"reserve", func() error { _, err := tl.Reserve(time.Second, p, tup(0, 0)); return err }, true},
		{"suspend", func() error { return tl.Suspend(1) }, true},
		{"resume", func() error { return tl.Resume(1) }, true},
		{"unknown release", func() error { assert.Error(t, tl.Release(99)); return nil }, false},
		{"trim", func() error { tl.Trim(500 * time.Millisecond); return nil }, false},
		{"release", func() error { return tl.Release(1) }, true},
	}
	for _, st := range steps {
		require.NoError(t, st.do(), st.name)
		if st.changes {
			assert.Greater(t, tl.Version(), v, st.name)
		} else {
			assert.Equal(t, v, tl.Version(), st.name)
		}
		v = tl.Version()
	}
}
