package vector

import (
	"slices"
	"sync"
)

// namespace holds one user's vectors: a dim-strided float32 slab scanned
// linearly, optionally an int8 copy of it (q8, with one scale per row), and
// ids[slot] and slot[id] kept in step. Deletes swap the last row into the
// hole of every slab so they stay dense and aligned.
type namespace struct {
	mu      sync.RWMutex
	slab    []float32 // len == len(ids)*dim; exact scores come from here
	q8      []int8    // len == len(ids)*dim if quantized, else nil
	qscale  []float32 // row i ≈ qscale[i] * q8 row i; len == len(ids) if quantized
	quant   bool      // keep q8/qscale
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
	if ok {
		copy(n.slab[s*dim:(s+1)*dim], vec)
	} else {
		s = len(n.ids)
		n.slot[id] = s
		n.ids = append(n.ids, id)
		n.slab = append(n.slab, vec...)
		if n.quant {
			n.q8 = append(n.q8, make([]int8, dim)...)
			n.qscale = append(n.qscale, 0)
		}
	}
	if n.quant {
		n.qscale[s] = quantize(n.q8[s*dim:(s+1)*dim], vec)
	}
	return !ok
}

// grow makes room for rows more rows (some may replace existing ones and need none) in one reallocation of
// each slab, so the appends that follow do not copy. Caller holds mu.
func (n *namespace) grow(rows, dim int) {
	// slices.Grow leaves a slab whose capacity suffices as it is; each is checked on its own.
	n.ids = slices.Grow(n.ids, rows)
	n.slab = slices.Grow(n.slab, rows*dim)
	if n.quant {
		n.q8 = slices.Grow(n.q8, rows*dim)
		n.qscale = slices.Grow(n.qscale, rows)
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
		copy(n.slab[s*dim:(s+1)*dim], n.slab[last*dim:])
		if n.quant {
			copy(n.q8[s*dim:(s+1)*dim], n.q8[last*dim:])
			n.qscale[s] = n.qscale[last]
		}
		moved := n.ids[last]
		n.ids[s] = moved
		n.slot[moved] = s
	}
	n.ids[last] = "" // drop the string reference
	n.ids = n.ids[:last]
	n.slab = n.slab[:last*dim]
	if n.quant {
		n.q8 = n.q8[:last*dim]
		n.qscale = n.qscale[:last]
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
	n.slab = append(make([]float32, 0, 2*rows*dim), n.slab...)
	if n.quant {
		n.q8 = append(make([]int8, 0, 2*rows*dim), n.q8...)
		n.qscale = append(make([]float32, 0, 2*rows), n.qscale...)
	}
}
