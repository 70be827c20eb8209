package chart

import (
	"hash/fnv"
	"image/color"
)

// policyColors give every policy the simulator names (package sim), and the GPU
// scorers examples/compare runs, a colour of its own, the same in every chart of every
// example. The first seven are Okabe and Ito's colour-blind-safe palette (its yellow
// left out: too pale on white), with FGM's vermillion used by no other name; the rest
// are from Paul Tol's colour-blind-safe schemes, chosen to stay apart from the
// policies they are charted with (Fair, Fair+LATE and Fair+PRRL; FGM and FGM+Tetris;
// LoadAware and LoadAware-100; the four GPU scorers).
var policyColors = map[string]color.RGBA{
	// FGM, the paper's scheduler, in a strong colour no other name shares.
	"FGM": rgb(0xD55E00), // vermillion

	// The paper's baselines (sim.Baselines).
	"FIFO":     rgb(0x000000), // black
	"Capacity": rgb(0xE69F00), // orange
	"Fair":     rgb(0x56B4E9), // sky blue
	"DRF":      rgb(0x0072B2), // blue

	// What users would run instead (sim.Rivals).
	"Kubernetes": rgb(0x009E73), // bluish green
	"Tetris":     rgb(0xCC79A7), // reddish purple
	"LoadAware":  rgb(0x999933), // olive

	// Variants.
	"FGM+Tetris":    rgb(0x882255), // wine
	"LoadAware-100": rgb(0x8C510A), // brown

	// Placement and speculation (sim.Placements, sim.Speculations).
	"Fair+PRL":  rgb(0x332288), // indigo
	"Fair+LATE": rgb(0xAA4499), // purple
	"Fair+PRRL": rgb(0x44AA99), // teal

	// The GPU scorers of examples/compare's fragmentation experiment (sim.GPUSharing).
	"BestFit":    rgb(0x117733), // green
	"DotProduct": rgb(0xDDCC77), // sand
	"Packing":    rgb(0x88CCEE), // cyan
	"FGD":        rgb(0xCC6677), // rose
}

// remainderColors are the colours of the names policyColors does not know (a
// configuration, a policy added later), none of them a policy's.
var remainderColors = []color.RGBA{
	rgb(0x777777), // grey
	rgb(0x997700), // dark yellow
	rgb(0x6699CC), // medium blue
	rgb(0x994455), // dark red
	rgb(0xEE99AA), // light red
	rgb(0x225555), // dark cyan
}

func rgb(x uint32) color.RGBA {
	return color.RGBA{R: uint8(x >> 16), G: uint8(x >> 8), B: uint8(x), A: 255}
}

// Color is the colour of the series named name: the policy's own colour for a policy
// the simulator names (FIFO, Capacity, Fair, DRF, Kubernetes, Tetris, LoadAware, FGM,
// and the others of package sim) or a GPU scorer of examples/compare, so that a policy
// has the same colour in every chart; for any other name, one of the remainder
// colours, chosen by a hash of the name (always the same for the same name; two names
// may share one: a Palette tells them apart).
func Color(name string) color.Color {
	if c, ok := policyColors[name]; ok {
		return c
	}
	return remainderColors[remainderIndex(name)]
}

// Known reports whether name is a policy with a colour of its own (see Color).
func Known(name string) bool {
	_, ok := policyColors[name]
	return ok
}

func remainderIndex(name string) int {
	h := fnv.New32a()
	h.Write([]byte(name))
	return int(h.Sum32() % uint32(len(remainderColors)))
}

// Palette colours the series of one chart by name, as Color does, but gives the names
// Color does not know remainder colours distinct from each other: a name whose hashed
// colour another such name of the chart has taken gets the next free one. The colours
// depend only on the names and the order in which they are first asked for. The zero
// Palette is ready to use.
type Palette struct {
	byName map[string]color.Color
	taken  map[int]bool // remainder colours given out
}

// Color is name's colour in the chart (see Palette).
func (p *Palette) Color(name string) color.Color {
	if c, ok := policyColors[name]; ok {
		return c
	}
	if c, ok := p.byName[name]; ok {
		return c
	}
	if p.byName == nil {
		p.byName, p.taken = map[string]color.Color{}, map[int]bool{}
	}
	i := remainderIndex(name)
	for k := range remainderColors {
		if j := (i + k) % len(remainderColors); !p.taken[j] {
			i = j
			break
		}
	}
	p.taken[i] = true
	p.byName[name] = remainderColors[i]
	return remainderColors[i]
}
