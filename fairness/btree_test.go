package fairness

import "fmt"

// check verifies the B-tree's shape: every node but the root holds minItems to
// maxItems items, an internal node one child more than items, every leaf is at the
// same depth (within maxBDepth), the items are in order by cmp (alike ones, cmp 0,
// only where alike is true) and Len counts them. It returns the items in order.
func (t *btree[I, O]) check(cmp func(a, b I) int, alike bool) ([]I, error) {
	var out []I
	leafDepth := -1
	var walk func(n *bnode[I, O], depth int) error
	walk = func(n *bnode[I, O], depth int) error {
		switch {
		case depth >= maxBDepth:
			return fmt.Errorf("depth %d", depth)
		case len(n.items) > t.free.maxItems():
			return fmt.Errorf("a node of %d items", len(n.items))
		case n != t.root && len(n.items) < t.free.minItems():
			return fmt.Errorf("a node of %d items below the root", len(n.items))
		case len(n.items) == 0:
			return fmt.Errorf("an empty node")
		case len(n.children) > 0 && len(n.children) != len(n.items)+1:
			return fmt.Errorf("%d children of %d items", len(n.children), len(n.items))
		}
		if len(n.children) == 0 {
			if leafDepth >= 0 && leafDepth != depth {
				return fmt.Errorf("leaves at depths %d and %d", leafDepth, depth)
			}
			leafDepth = depth
			out = append(out, n.items...)
			return nil
		}
		for i, c := range n.children {
			if err := walk(c, depth+1); err != nil {
				return err
			}
			if i < len(n.items) {
				out = append(out, n.items[i])
			}
		}
		return nil
	}
	if t.root != nil {
		if err := walk(t.root, 0); err != nil {
			return nil, err
		}
	}
	for i := 1; i < len(out); i++ {
		if c := cmp(out[i-1], out[i]); c > 0 || (c == 0 && !alike) {
			return nil, fmt.Errorf("items %d and %d out of order", i-1, i)
		}
	}
	if len(out) != t.n {
		return nil, fmt.Errorf("Len %d, %d items", t.n, len(out))
	}
	return out, t.free.checkFree(t)
}

// checkFree verifies what f keeps: at most bfreeNodes nodes, and arrays cleared (they
// hold no item), of the capacity they are kept under, at most bfreeArrays of each,
// none kept twice, and none an array a node of t uses.
func (f *bfree[I, O]) checkFree(t *btree[I, O]) error {
	if len(f.nodes) > bfreeNodes {
		return fmt.Errorf("%d free nodes kept", len(f.nodes))
	}
	base := func(a []I) *I { return &a[:cap(a)][0] }
	kept := map[*I]bool{}
	var zero I
	for c, arrays := range f.arrays {
		if len(arrays) > bfreeArrays {
			return fmt.Errorf("%d arrays of capacity %d kept", len(arrays), c)
		}
		for _, a := range arrays {
			if cap(a) != c || len(a) != 0 {
				return fmt.Errorf("an array of %d/%d kept as of capacity %d", len(a), cap(a), c)
			}
			for _, x := range a[:c] {
				if x != zero {
					return fmt.Errorf("a kept array of capacity %d holds %v", c, x)
				}
			}
			if kept[base(a)] {
				return fmt.Errorf("an array of capacity %d kept twice", c)
			}
			kept[base(a)] = true
		}
	}
	var walk func(n *bnode[I, O]) error
	walk = func(n *bnode[I, O]) error {
		if cap(n.items) > 0 && kept[base(n.items)] {
			return fmt.Errorf("a node uses a kept array")
		}
		for _, c := range n.children {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	if t.root != nil {
		return walk(t.root)
	}
	return nil
}
