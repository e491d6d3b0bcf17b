package vector

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Index is a vector index partitioned by namespace, scored by dot products with the vectors as stored, in half
// precision with a scale a row (see Options.Exact for the quantized candidate scan). It is safe for
// concurrent use: searches run in parallel, and each namespace has its own
// lock so writes to one user's vectors never block another user's searches.
type Index struct {
	dim   int
	opts  Options
	quant bool // namespaces keep an int8 slab and searches scan it
	total atomic.Int64
	// closed is set by Close: no slab is metered afterwards. A namespace metered before is unmetered by Close,
	// under its lock, so a write racing Close is counted out either way.
	closed atomic.Bool

	mu     sync.RWMutex // guards spaces (the map only, not the namespaces)
	spaces map[string]*namespace
}

// New returns an empty index of vectors with dim components, using default Options.
// It panics if dim < 1, a programming error.
func New(dim int) *Index { return NewWithOptions(dim, Options{}) }

// NewWithOptions is New with tuning options.
func NewWithOptions(dim int, o Options) *Index {
	if dim < 1 {
		panic(fmt.Sprintf("vector: dimension %d < 1", dim))
	}
	return &Index{
		dim:    dim,
		opts:   o.withDefaults(),
		quant:  !o.Exact && dim >= minQuantDim,
		spaces: make(map[string]*namespace),
	}
}

// Dim returns the vector dimension.
func (ix *Index) Dim() int { return ix.dim }

// Len returns the number of vectors across all namespaces.
func (ix *Index) Len() int { return int(ix.total.Load()) }

// NamespaceLen returns the number of vectors in namespace ns.
func (ix *Index) NamespaceLen(ns string) int {
	n := ix.lookup(ns)
	if n == nil {
		return 0
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	return len(n.ids)
}

// Upsert stores a copy of vec under (ns, id), replacing any vector already there.
func (ix *Index) Upsert(ns, id string, vec []float32) error {
	if err := ix.check(id, vec); err != nil {
		return err
	}
	n := ix.lockLive(ns)
	if n.upsert(id, vec) {
		ix.total.Add(1)
	}
	ix.metered(n)
	n.mu.Unlock()
	return nil
}

// UpsertMany is Upsert of vecs[i] under (ns, ids[i]) for every i, under one lock, with the namespace grown once
// to hold them all: a bulk load (a shard's index rebuilt on open) then copies each slab once instead of at every
// growth of append. It checks every vector before storing any.
func (ix *Index) UpsertMany(ns string, ids []string, vecs [][]float32) error {
	if len(ids) != len(vecs) {
		return fmt.Errorf("vector: %d ids for %d vectors", len(ids), len(vecs))
	}
	for i, v := range vecs {
		if err := ix.check(ids[i], v); err != nil {
			return err
		}
	}
	if len(ids) == 0 {
		return nil
	}
	n := ix.lockLive(ns)
	n.grow(len(ids), ix.dim)
	added := 0
	for i, id := range ids {
		if n.upsert(id, vecs[i]) {
			added++
		}
	}
	ix.total.Add(int64(added))
	ix.metered(n)
	n.mu.Unlock()
	return nil
}

// Rows calls fn with every vector of namespace ns as stored (in half precision, scaled back), in storage order,
// under the namespace's read lock: fn must not call back into the index, and must copy vec to keep it (it is
// reused for the next row). Storing a row back gives the same row.
func (ix *Index) Rows(ns string, fn func(id string, vec []float32)) {
	vec := make([]float32, ix.dim)
	ix.RowsHalf(ns, func(id string, half []uint16, scale float32) {
		decodeRow(vec, half, scale)
		fn(id, vec)
	})
}

// Load stores the vector slab[i*dim:(i+1)*dim] under (ns, ids[i]) for every i. When ns holds nothing (an open
// loading a checkpoint) the namespace takes ids as its own and sizes its slabs to the rows exactly: the caller
// must not use ids afterwards. Otherwise it is UpsertMany.
func (ix *Index) Load(ns string, ids []string, slab []float32) error {
	if len(slab) != len(ids)*ix.dim {
		return fmt.Errorf("%w: %d floats for %d vectors of %d", ErrDimension, len(slab), len(ids), ix.dim)
	}
	vecs := make([][]float32, len(ids))
	for i := range ids {
		vecs[i] = slab[i*ix.dim : (i+1)*ix.dim]
	}
	return ix.load(ns, ids, func(n *namespace) {
		n.half, n.scale = make([]uint16, len(slab)), make([]float32, len(ids))
		if n.quant {
			n.q8 = make([]int8, len(slab))
		}
		for i, v := range vecs {
			n.scale[i] = encodeRow(n.half[i*ix.dim:(i+1)*ix.dim], n.q8row(i, ix.dim), v)
		}
	}, func() [][]float32 { return vecs })
}

// RowsHalf is Rows handing out each row as stored: its half-precision components (the bits) and its scale. A
// checkpoint is written from it; LoadHalf takes them back as they are.
func (ix *Index) RowsHalf(ns string, fn func(id string, half []uint16, scale float32)) {
	n := ix.lookup(ns)
	if n == nil {
		return
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	if n.dropped {
		return
	}
	for i, id := range n.ids {
		fn(id, n.half[i*ix.dim:(i+1)*ix.dim], n.scale[i])
	}
}

// LoadHalf is Load of rows as RowsHalf handed them out: half[i*dim:(i+1)*dim] scaled by scales[i] under ids[i].
// Into an empty ns it takes ids, half and scales as its own, without encoding anything again (only the int8 copy
// is computed); the caller must not use them afterwards. A row encodeRow could not have written (a component
// above 1 in magnitude, infinite or NaN, a scale negative, infinite or NaN) fails the whole load.
func (ix *Index) LoadHalf(ns string, ids []string, half []uint16, scales []float32) error {
	if len(half) != len(ids)*ix.dim || len(scales) != len(ids) {
		return fmt.Errorf("%w: %d halves and %d scales for %d vectors of %d", ErrDimension, len(half), len(scales),
			len(ids), ix.dim)
	}
	var q8 []int8
	if ix.quant {
		q8 = make([]int8, len(half))
	}
	for i := range ids {
		var row []int8
		if q8 != nil {
			row = q8[i*ix.dim : (i+1)*ix.dim]
		}
		if !storedRow(row, half[i*ix.dim:(i+1)*ix.dim], scales[i]) {
			return fmt.Errorf("vector: row %q is not one this index stores", ids[i])
		}
	}
	// Into a namespace that holds rows: decoded and stored again, which gives the same rows.
	vecs := func() [][]float32 {
		vecs := make([][]float32, len(ids))
		for i := range ids {
			vecs[i] = make([]float32, ix.dim)
			decodeRow(vecs[i], half[i*ix.dim:(i+1)*ix.dim], scales[i])
		}
		return vecs
	}
	return ix.load(ns, ids, func(n *namespace) { n.half, n.scale, n.q8 = half, scales, q8 }, vecs)
}

// load is what Load and LoadHalf share: ids are checked (none empty, none twice); into an empty ns they become
// the namespace's and fill sets its slabs for them, under its lock; into one that holds rows, vecs() are
// upserted.
func (ix *Index) load(ns string, ids []string, fill func(n *namespace), vecs func() [][]float32) error {
	if len(ids) == 0 {
		return nil
	}
	slot := make(map[string]int, len(ids))
	for i, id := range ids {
		if id == "" {
			return ErrEmptyID
		}
		if _, dup := slot[id]; dup {
			return fmt.Errorf("vector: id %q twice in one load", id)
		}
		slot[id] = i
	}
	n := ix.lockLive(ns)
	if len(n.ids) > 0 {
		n.mu.Unlock()
		return ix.UpsertMany(ns, ids, vecs())
	}
	n.ids, n.slot = ids, slot
	fill(n)
	ix.total.Add(int64(len(ids)))
	ix.metered(n)
	n.mu.Unlock()
	return nil
}

// check reports why (id, vec) cannot be stored, if it cannot.
func (ix *Index) check(id string, vec []float32) error {
	if len(vec) != ix.dim {
		return fmt.Errorf("%w: got %d, want %d", ErrDimension, len(vec), ix.dim)
	}
	if id == "" {
		return ErrEmptyID
	}
	return nil
}

// lockLive returns ns's namespace, created if missing, with its lock held for writing and still in the index.
func (ix *Index) lockLive(ns string) *namespace {
	for {
		n := ix.lookupOrCreate(ns)
		n.mu.Lock()
		if !n.dropped { // else it lost a race with DropNamespace or an emptying Delete: retry on a fresh one
			return n
		}
		n.mu.Unlock()
	}
}

// Delete removes (ns, id) and reports whether it existed.
func (ix *Index) Delete(ns, id string) bool {
	n := ix.lookup(ns)
	if n == nil {
		return false
	}
	n.mu.Lock()
	if n.dropped { // DropNamespace took it (and its count) first
		n.mu.Unlock()
		return false
	}
	ok := n.remove(id, ix.dim)
	empty := len(n.ids) == 0
	ix.metered(n)
	n.mu.Unlock()
	if ok {
		ix.total.Add(-1)
	}
	if empty {
		ix.dropIfEmpty(ns, n)
	}
	return ok
}

// DropNamespace removes every vector of namespace ns.
func (ix *Index) DropNamespace(ns string) {
	// Unmap first and release ix.mu, so a long search holding n.mu cannot
	// stall every other namespace's lookups behind this drop.
	ix.mu.Lock()
	n := ix.spaces[ns]
	delete(ix.spaces, ns)
	ix.mu.Unlock()
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	ix.total.Add(-int64(len(n.ids)))
	ix.unmetered(n)
	n.dropped = true // writers still holding n retry against a fresh namespace
}

// Close takes the index's slabs off its Meter for good: an index is closed when its replica's indexes are, so
// the node's count of vector bytes follows the replicas it holds. The vectors stay searchable (a search that
// raced the close still answers) until the index is dropped; writes after Close are not metered.
func (ix *Index) Close() {
	ix.closed.Store(true)
	ix.mu.RLock()
	spaces := make([]*namespace, 0, len(ix.spaces))
	for _, n := range ix.spaces {
		spaces = append(spaces, n)
	}
	ix.mu.RUnlock()
	for _, n := range spaces {
		n.mu.Lock()
		ix.unmetered(n)
		n.mu.Unlock()
	}
}

// dropIfEmpty unmaps n if it is still ns's namespace and still empty, so
// users who delete everything leave no map entry behind. Lock order is
// always ix.mu then n.mu.
func (ix *Index) dropIfEmpty(ns string, n *namespace) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.spaces[ns] != n {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.ids) == 0 {
		ix.unmetered(n)
		n.dropped = true
		delete(ix.spaces, ns)
	}
}

func (ix *Index) lookup(ns string) *namespace {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.spaces[ns]
}

func (ix *Index) lookupOrCreate(ns string) *namespace {
	if n := ix.lookup(ns); n != nil {
		return n
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	n := ix.spaces[ns]
	if n == nil {
		n = newNamespace(ix.quant)
		ix.spaces[ns] = n
	}
	return n
}

// Score returns the score (dot product) of q against the stored vector of id in namespace ns, and false
// when ns has no such id or q has the wrong length. Hybrid search uses it to score candidates that only the
// full-text side found, without reading their records.
func (ix *Index) Score(ns, id string, q []float32) (float32, bool) {
	if len(q) != ix.dim {
		return 0, false
	}
	n := ix.lookup(ns)
	if n == nil {
		return 0, false
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	s, ok := n.slot[id]
	if !ok || n.dropped {
		return 0, false
	}
	return dotF16(q, n.half[s*ix.dim:(s+1)*ix.dim]) * n.scale[s], true
}
