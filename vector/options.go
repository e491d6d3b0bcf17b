package vector

import "runtime"

// Options tunes an Index. Zero fields take defaults.
type Options struct {
	// ParallelMin is the namespace size (rows) from which a search is split
	// across goroutines; below it goroutine start-up costs more than it saves.
	// Default 16384.
	ParallelMin int
	// Workers caps the goroutines one search uses. Default runtime.GOMAXPROCS(0),
	// read at search time so it follows later changes.
	Workers int
	// Exact turns the quantized scan off: every search scores every
	// half-precision row, and no int8 copy of the vectors is kept (saves dim
	// bytes per vector). By default, for dimensions of at least 64, a search
	// scans an int8 copy of the rows (half the bytes of the half rows), keeps
	// the best max(k*Rerank, RerankMin) candidates and re-scores those from
	// their half rows, so returned scores are always those the flat scan gives.
	Exact bool
	// Rerank is the re-rank factor R of the quantized scan. Default 8.
	Rerank int
	// RerankMin is the least number of candidates the quantized scan
	// re-scores, whatever k. Default 64.
	RerankMin int
	// Meter, when set, counts the bytes of the rows this index holds, beside those of the other indexes that
	// share it, and the searches scanning their large namespaces (a search splits its scan only while it is the
	// only one). Default the index's own: its searches then see only each other.
	Meter *Meter
}

const (
	defaultParallelMin = 16 << 10
	defaultRerank      = 8
	defaultRerankMin   = 64
	// minQuantDim is the smallest dimension that gets an int8 slab: below it
	// a row is a cache line or less, per-row work dominates the scan, and a
	// few large components dominate a vector's quantization error.
	minQuantDim = 64
)

func (o Options) withDefaults() Options {
	if o.ParallelMin <= 0 {
		o.ParallelMin = defaultParallelMin
	}
	if o.Rerank <= 0 {
		o.Rerank = defaultRerank
	}
	if o.RerankMin <= 0 {
		o.RerankMin = defaultRerankMin
	}
	if o.Meter == nil {
		o.Meter = NewMeter()
	}
	return o
}

// candidates is how many rows the quantized scan keeps for exact re-ranking.
func (o Options) candidates(k int) int { return max(k*o.Rerank, o.RerankMin) }

// workers is the number of goroutines to scan n rows with. A search splits its scan only while no other search
// of the Meter's indexes large enough to split scans (scanning counts this one): beside another, the cores are
// taken already, and
// each part keeps its own candidates, so splitting costs more rows offered, more selections and a merge for
// nothing (under eight clients searching 100k memories, a tenth of the shard leader's CPU went to selections).
func (o Options) workers(n int, scanning int32) int {
	if n < o.ParallelMin || scanning > 1 {
		return 1
	}
	w := o.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	// Keep each part at least half of ParallelMin rows so tiny parts are not spawned.
	if most := 2 * n / o.ParallelMin; w > most {
		w = most
	}
	return max(w, 1)
}
