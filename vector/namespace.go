package vector

import (
	"slices"
	"sync"
)

// namespace holds one user's vectors: a dim-strided slab of half-precision rows with one scale a row (see
// encodeRow), scanned linearly, optionally an int8 copy of the rows (q8), and ids[slot] and slot[id] kept in
// step. Deletes swap the last row into the hole of every slab so they stay dense and aligned.
type namespace struct {
	mu      sync.RWMutex
	half    []uint16  // len == len(ids)*dim; scores come from here
	scale   []float32 // len == len(ids): row i ≈ scale[i] × half row i
	q8      []int8    // len == len(ids)*dim if quantized (round(127 × half)), else nil
	quant   bool      // keep q8
	ids     []string
	slot    map[string]int
	dropped bool  // set under mu once the namespace left the index; writers must retry
	metered int64 // the slabs' bytes as counted in the index's Meter
}

func newNamespace(quant bool) *namespace {
	return &namespace{slot: make(map[string]int), quant: quant}
}

// upsert stores vec under id and reports whether the id is new. Caller holds mu.
func (n *namespace) upsert(id string, vec []float32) bool {
	dim := len(vec)
	s, ok := n.slot[id]
	if !ok {
		s = len(n.ids)
		n.slot[id] = s
		n.ids = append(n.ids, id)
		n.half = append(n.half, make([]uint16, dim)...)
		n.scale = append(n.scale, 0)
		if n.quant {
			n.q8 = append(n.q8, make([]int8, dim)...)
		}
	}
	n.scale[s] = encodeRow(n.half[s*dim:(s+1)*dim], n.q8row(s, dim), vec)
	return !ok
}

// q8row is row s of the int8 slab, or nil when there is none.
func (n *namespace) q8row(s, dim int) []int8 {
	if !n.quant {
		return nil
	}
	return n.q8[s*dim : (s+1)*dim]
}

// grow makes room for rows more rows (some may replace existing ones and need none) in one reallocation of
// each slab, so the appends that follow do not copy. Caller holds mu.
func (n *namespace) grow(rows, dim int) {
	// slices.Grow leaves a slab whose capacity suffices as it is; each is checked on its own.
	n.ids = slices.Grow(n.ids, rows)
	n.half = slices.Grow(n.half, rows*dim)
	n.scale = slices.Grow(n.scale, rows)
	if n.quant {
		n.q8 = slices.Grow(n.q8, rows*dim)
	}
}

// remove deletes id, moving the last row into its slot. Caller holds mu.
func (n *namespace) remove(id string, dim int) bool {
	s, ok := n.slot[id]
	if !ok {
		return false
	}
	last := len(n.ids) - 1
	if s != last {
		copy(n.half[s*dim:(s+1)*dim], n.half[last*dim:])
		n.scale[s] = n.scale[last]
		if n.quant {
			copy(n.q8[s*dim:(s+1)*dim], n.q8[last*dim:])
		}
		moved := n.ids[last]
		n.ids[s] = moved
		n.slot[moved] = s
	}
	n.ids[last] = "" // drop the string reference
	n.ids = n.ids[:last]
	n.half = n.half[:last*dim]
	n.scale = n.scale[:last]
	if n.quant {
		n.q8 = n.q8[:last*dim]
	}
	delete(n.slot, id)
	n.shrink(dim)
	return true
}

// shrink reallocates once three quarters of the slab capacity is unused,
// so a namespace that was large once does not pin its peak memory.
func (n *namespace) shrink(dim int) {
	const minRows = 1024
	rows := len(n.ids)
	if cap(n.ids) <= minRows || rows > cap(n.ids)/4 {
		return
	}
	n.ids = append(make([]string, 0, 2*rows), n.ids...)
	n.half = append(make([]uint16, 0, 2*rows*dim), n.half...)
	n.scale = append(make([]float32, 0, 2*rows), n.scale...)
	if n.quant {
		n.q8 = append(make([]int8, 0, 2*rows*dim), n.q8...)
	}
}
