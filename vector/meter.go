package vector

import "sync/atomic"

// A Meter adds up the bytes of the vector slabs held by the indexes that share it: a node's shard indexes report
// to one Meter, and the node paces its garbage collector by it (vectors at rest need no collector headroom). A
// slab counts at its capacity, the room grown for rows to come included, until its namespace leaves the index.
// It also counts the searches scanning those indexes' large namespaces, so that a search splits its scan over
// goroutines only while it is the only one (Options.workers).
type Meter struct {
	bytes    atomic.Int64
	scanning atomic.Int32 // searches of the Meter's indexes scanning now
}

// NewMeter returns a Meter at zero.
func NewMeter() *Meter { return &Meter{} }

// Bytes is what the slabs of the Meter's indexes take: dim half-precision components and a scale a row, and
// with the quantized scan an int8 copy.
func (m *Meter) Bytes() int64 {
	if m == nil {
		return 0
	}
	return m.bytes.Load()
}

func (m *Meter) add(n int64) {
	if m != nil {
		m.bytes.Add(n)
	}
}

// metered brings the Meter up to date with n's slabs after a change. Caller holds n.mu for writing.
func (ix *Index) metered(n *namespace) {
	if ix.closed.Load() {
		return
	}
	// Most writes land within the slabs' capacity: the shared count is touched only when a slab grew or shrank.
	if b := int64(2*cap(n.half) + 4*cap(n.scale) + cap(n.q8)); b != n.metered {
		ix.opts.Meter.add(b - n.metered)
		n.metered = b
	}
}

// unmetered takes n's slabs off the Meter as n leaves the index. Caller holds n.mu for writing.
func (ix *Index) unmetered(n *namespace) {
	ix.opts.Meter.add(-n.metered)
	n.metered = 0
}
