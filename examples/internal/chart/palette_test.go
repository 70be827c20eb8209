package chart

import (
	"fmt"
	"image/color"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/finegrain/finegrain/sim"
)

// simPolicyNames are the names of every policy package sim builds, and of the GPU
// scorers examples/compare runs through sim.GPUSharing.
func simPolicyNames() []string {
	lists := [][]sim.Policy{sim.Comparison(), sim.Policies(), sim.Baselines(), sim.Rivals(), sim.Placements(), sim.Speculations(),
		{sim.FGMTetris(), sim.LoadAwareFull(), sim.FairPreRelease(), sim.FairLATE(), sim.FairPRRL()}}
	seen := map[string]bool{}
	var names []string
	for _, ps := range lists {
		for _, p := range ps {
			if !seen[p.Name] {
				seen[p.Name] = true
				names = append(names, p.Name)
			}
		}
	}
	return append(names, "BestFit", "DotProduct", "Packing", "FGD")
}

func hex(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8)
}

// Every policy the simulator names has a colour of its own, fixed (the same in every
// chart and every run), and none of them is a remainder colour.
func TestPolicyColors(t *testing.T) {
	want := map[string]string{
		"FGM": "#D55E00", "FIFO": "#000000", "Capacity": "#E69F00", "Fair": "#56B4E9", "DRF": "#0072B2",
		"Kubernetes": "#009E73", "Tetris": "#CC79A7", "LoadAware": "#999933", "FGM+Tetris": "#882255",
		"LoadAware-100": "#8C510A", "Fair+PRL": "#332288", "Fair+LATE": "#AA4499", "Fair+PRRL": "#44AA99",
		"BestFit": "#117733", "DotProduct": "#DDCC77", "Packing": "#88CCEE", "FGD": "#CC6677",
	}
	names := simPolicyNames()
	assert.Len(t, names, len(want), "a policy of package sim without a colour, or a colour without a policy")
	remainder := map[string]bool{}
	for _, c := range remainderColors {
		remainder[hex(c)] = true
	}
	byColor := map[string]string{}
	for _, n := range names {
		assert.True(t, Known(n), "%s has no colour of its own", n)
		c := hex(Color(n))
		assert.Equal(t, want[n], c, n)
		assert.Empty(t, byColor[c], "%s and %s share %s", byColor[c], n, c)
		assert.False(t, remainder[c], "%s has a remainder colour", n)
		byColor[c] = n
		var p Palette
		assert.Equal(t, Color(n), p.Color(n), "%s in a palette", n)
	}
	assert.Len(t, remainder, len(remainderColors), "remainder colours repeat")
}

// A name the palette does not know gets a remainder colour, always the same; in one
// chart (a Palette), such names get distinct colours while there are enough, and a
// policy keeps its own.
func TestPaletteUnknownNames(t *testing.T) {
	assert.False(t, Known("priority+guarantees"))
	in := func(c color.Color) bool {
		for _, r := range remainderColors {
			if c == r {
				return true
			}
		}
		return false
	}
	for _, n := range []string{"none", "priority", "priority+guarantees", "", "fgm"} {
		assert.True(t, in(Color(n)), "%q", n)
		assert.Equal(t, Color(n), Color(n), "%q", n)
	}
	names := []string{"a", "b", "c", "d", "e", "f"}
	var p Palette
	got := map[color.Color]string{}
	for _, n := range names {
		c := p.Color(n)
		assert.True(t, in(c), n)
		assert.Empty(t, got[c], "%s and %s share a colour", got[c], n)
		got[c] = n
	}
	assert.Equal(t, got[p.Color("c")], "c", "asked again, the same colour")
	assert.Equal(t, Color("FGM"), p.Color("FGM"))
	// The same names in the same order: the same colours.
	var q Palette
	for _, n := range names {
		assert.Equal(t, p.Color(n), q.Color(n), n)
	}
	// More names than remainder colours: still a remainder colour each.
	assert.True(t, in(p.Color("g")))
}
