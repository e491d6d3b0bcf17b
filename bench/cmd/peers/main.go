// Command peers measures memcluster's search components against peer libraries on identical
// data in one process, one run ("Peers in the same run"):
//
//   - vector: our exact index (vector.New: int8 scan + re-rank from half-precision rows; and
//     Options{Exact}, the flat scan of the half-precision rows) against github.com/philippgille/chromem-go's exhaustive
//     QueryEmbedding, one namespace/collection, k = 10, the same normalised vectors and queries,
//     and the machine's stream-sum memory bandwidth measured in the same repetition;
//   - bm25: our fulltext package (per-shard bleve index, query shaping, user filter) against a
//     plain bleve v2 index (default mapping, scorch, BM25 scoring model) on the same synthetic
//     Zipf corpus, the same queries, k = 10.
//
// Every measurement of a repetition runs the engines back to back in a rotating order, so noise
// on the shared machine hits both sides; bench/cmd/report takes medians over repetitions.
// Output: one JSON document (see type Result).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	index "github.com/blevesearch/bleve_index_api"
	chromem "github.com/philippgille/chromem-go"

	"github.com/memcluster/memcluster/fulltext"
	"github.com/memcluster/memcluster/vector"
)

// Lat is one measurement: latencies of individual searches, in milliseconds.
type Lat struct {
	Queries int     `json:"queries"`
	P50     float64 `json:"p50_ms"`
	P99     float64 `json:"p99_ms"`
	Mean    float64 `json:"mean_ms"`
}

// VectorCase is one (n, dim) configuration; slices are per repetition.
type VectorCase struct {
	N   int `json:"n"`
	Dim int `json:"dim"`
	// BandwidthGiBs is the stream-sum bandwidth (GOMAXPROCS goroutines over 256 MiB) measured
	// in the same repetition, just before or after the searches.
	BandwidthGiBs []float64          `json:"bandwidth_gib_s"`
	Engines       map[string][]Lat   `json:"engines"` // ours (int8+rerank), ours-exact (float32), chromem
	RecallVsPeer  map[string]float64 `json:"recall_at_10_vs_chromem"`
	BuildS        map[string]float64 `json:"build_s"`
}

// BM25Case is one corpus size.
type BM25Case struct {
	N            int                `json:"n"`
	Engines      map[string][]Lat   `json:"engines"` // ours, bleve
	OverlapAt10  float64            `json:"overlap_at_10"`
	BuildS       map[string]float64 `json:"build_s"`
	HitsPerQuery map[string]float64 `json:"hits_per_query"`
}

type Result struct {
	Started    time.Time    `json:"started"`
	GoMaxProcs int          `json:"gomaxprocs"`
	Reps       int          `json:"reps"`
	MaxQueries int          `json:"max_queries"`
	MaxTimeS   float64      `json:"max_time_s"`
	Command    string       `json:"command"`
	Vector     []VectorCase `json:"vector"`
	BM25       []BM25Case   `json:"bm25"`
}

var (
	reps     = flag.Int("reps", 3, "repetitions of every measurement")
	maxQ     = flag.Int("max-queries", 400, "at most this many searches per measurement")
	maxTime  = flag.Duration("max-time", 1500*time.Millisecond, "and at most this long (at least 30 searches)")
	vecSizes = flag.String("vector-sizes", "10000,100000", "vector counts")
	vecDims  = flag.String("vector-dims", "384,768", "dimensions")
	ftSizes  = flag.String("bm25-sizes", "10000,100000", "BM25 corpus sizes")
	tmp      = flag.String("tmp", "", "directory for the on-disk indexes (default: a temp dir)")
	out      = flag.String("out", "", "write JSON here (default stdout)")
	only     = flag.String("only", "", "vector or bm25: run one part")
)

func ints(s string) []int {
	var r []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			n, err := strconv.Atoi(f)
			if err != nil {
				log.Fatalf("bad number %q", f)
			}
			r = append(r, n)
		}
	}
	return r
}

func main() {
	flag.Parse()
	log.SetFlags(log.Ltime)
	res := Result{Started: time.Now().UTC(), GoMaxProcs: runtime.GOMAXPROCS(0), Reps: *reps,
		MaxQueries: *maxQ, MaxTimeS: maxTime.Seconds(), Command: strings.Join(os.Args, " ")}
	dir := *tmp
	if dir == "" {
		d, err := os.MkdirTemp("", "memcluster-peers-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		dir = d
	}
	if *only != "bm25" {
		bw := newBandwidth()
		for _, n := range ints(*vecSizes) {
			for _, dim := range ints(*vecDims) {
				res.Vector = append(res.Vector, vectorCase(bw, n, dim))
			}
		}
		bw.x = nil
	}
	if *only != "vector" {
		for _, n := range ints(*ftSizes) {
			res.BM25 = append(res.BM25, bm25Case(filepath.Join(dir, fmt.Sprint("bm25-", n)), n))
		}
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	b = append(b, '\n')
	if *out == "" {
		os.Stdout.Write(b)
	} else if err := os.WriteFile(*out, b, 0o644); err != nil {
		log.Fatal(err)
	}
}

// measure runs search over the queries (cycling) until maxQ searches or maxTime, at least 30.
func measure(nq int, search func(i int)) Lat {
	var lat []time.Duration
	start := time.Now()
	for i := 0; i < *maxQ && (i < 30 || time.Since(start) < *maxTime); i++ {
		t := time.Now()
		search(i % nq)
		lat = append(lat, time.Since(t))
	}
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
	return Lat{Queries: len(lat), P50: ms(lat[len(lat)/2]), P99: ms(lat[min(len(lat)-1, len(lat)*99/100)]),
		Mean: ms(sum / time.Duration(len(lat)))}
}

func freeMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}

// ---- vector ----

func unit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	var s float64
	for i := range v {
		x := r.NormFloat64()
		v[i] = float32(x)
		s += x * x
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return v
}

var errNoEmbed = errors.New("peers: embedding func called, but every document and query carries its embedding")

func vectorCase(bw *bandwidth, n, dim int) VectorCase {
	log.Printf("vector n=%d dim=%d: building", n, dim)
	r := rand.New(rand.NewPCG(uint64(n), uint64(dim)))
	ids := make([]string, n)
	vecs := make([][]float32, n)
	for i := range vecs {
		ids[i] = "m" + strconv.Itoa(i)
		vecs[i] = unit(r, dim)
	}
	qr := rand.New(rand.NewPCG(7, 7))
	qs := make([][]float32, 64)
	for i := range qs {
		qs[i] = unit(qr, dim)
	}
	c := VectorCase{N: n, Dim: dim, Engines: map[string][]Lat{}, RecallVsPeer: map[string]float64{}, BuildS: map[string]float64{}}

	t := time.Now()
	ours := vector.New(dim)
	for i, v := range vecs {
		if err := ours.Upsert("bench", ids[i], v); err != nil {
			log.Fatal(err)
		}
	}
	c.BuildS["ours"] = time.Since(t).Seconds()
	t = time.Now()
	exact := vector.NewWithOptions(dim, vector.Options{Exact: true})
	for i, v := range vecs {
		if err := exact.Upsert("bench", ids[i], v); err != nil {
			log.Fatal(err)
		}
	}
	c.BuildS["ours-exact"] = time.Since(t).Seconds()

	ctx := context.Background()
	t = time.Now()
	db := chromem.NewDB()
	col, err := db.CreateCollection("bench", nil, func(context.Context, string) ([]float32, error) { return nil, errNoEmbed })
	if err != nil {
		log.Fatal(err)
	}
	docs := make([]chromem.Document, n)
	for i := range docs {
		docs[i] = chromem.Document{ID: ids[i], Embedding: vecs[i]}
	}
	if err := col.AddDocuments(ctx, docs, runtime.GOMAXPROCS(0)); err != nil {
		log.Fatal(err)
	}
	docs = nil
	c.BuildS["chromem"] = time.Since(t).Seconds()

	const k = 10
	engines := []struct {
		name   string
		search func(q []float32) []string
	}{
		{"ours", func(q []float32) []string {
			h := ours.Search("bench", q, k, nil)
			r := make([]string, len(h))
			for i := range h {
				r[i] = h[i].ID
			}
			return r
		}},
		{"ours-exact", func(q []float32) []string {
			h := exact.Search("bench", q, k, nil)
			r := make([]string, len(h))
			for i := range h {
				r[i] = h[i].ID
			}
			return r
		}},
		{"chromem", func(q []float32) []string {
			res, err := col.QueryEmbedding(ctx, q, k, nil, nil)
			if err != nil {
				log.Fatal(err)
			}
			r := make([]string, len(res))
			for i := range res {
				r[i] = res[i].ID
			}
			return r
		}},
	}
	// Same results? Overlap of each engine's top 10 with chromem's (both exact: expect 1.0).
	for _, e := range engines[:2] {
		hit := 0
		for _, q := range qs {
			want := map[string]bool{}
			for _, id := range engines[2].search(q) {
				want[id] = true
			}
			for _, id := range e.search(q) {
				if want[id] {
					hit++
				}
			}
		}
		c.RecallVsPeer[e.name] = float64(hit) / float64(k*len(qs))
	}
	for rep := range *reps {
		c.BandwidthGiBs = append(c.BandwidthGiBs, bw.measure())
		for j := range engines {
			e := engines[(j+rep)%len(engines)]
			l := measure(len(qs), func(i int) {
				if len(e.search(qs[i])) != k {
					log.Fatalf("%s: short result", e.name)
				}
			})
			c.Engines[e.name] = append(c.Engines[e.name], l)
		}
		log.Printf("vector n=%d dim=%d rep %d: bw %.1f GiB/s ours p50 %.2f ms exact %.2f ms chromem %.2f ms", n, dim, rep+1,
			c.BandwidthGiBs[rep], c.Engines["ours"][rep].P50, c.Engines["ours-exact"][rep].P50, c.Engines["chromem"][rep].P50)
	}
	ours, exact, col, vecs = nil, nil, nil, nil
	_ = db.DeleteCollection("bench")
	freeMemory()
	return c
}

// bandwidth is the stream-sum of vector/bench_test.go's BenchmarkMemoryBandwidth, in plain Go:
// GOMAXPROCS goroutines each sum a contiguous part of a 256 MiB float32 slice.
type bandwidth struct{ x []float32 }

func newBandwidth() *bandwidth {
	x := make([]float32, 64<<20)
	for i := range x {
		x[i] = 1
	}
	return &bandwidth{x: x}
}

var sink float32

// measure returns the median of 5 passes, in GiB/s.
func (b *bandwidth) measure() float64 {
	threads := runtime.GOMAXPROCS(0)
	var gibs []float64
	for range 5 {
		t := time.Now()
		sums := make([]float32, threads)
		var wg sync.WaitGroup
		for th := range threads {
			lo, hi := len(b.x)*th/threads&^7, len(b.x)*(th+1)/threads&^7
			wg.Go(func() { sums[th] = sum8(b.x[lo:hi]) })
		}
		wg.Wait()
		for _, s := range sums {
			sink += s
		}
		gibs = append(gibs, float64(len(b.x)*4)/time.Since(t).Seconds()/(1<<30))
	}
	slices.Sort(gibs)
	return gibs[len(gibs)/2]
}

// sum8 keeps eight independent add chains so the loop is bound by memory, not add latency.
func sum8(x []float32) float32 {
	var a0, a1, a2, a3, a4, a5, a6, a7 float32
	for i := 0; i+8 <= len(x); i += 8 {
		y := x[i : i+8 : i+8]
		a0 += y[0]
		a1 += y[1]
		a2 += y[2]
		a3 += y[3]
		a4 += y[4]
		a5 += y[5]
		a6 += y[6]
		a7 += y[7]
	}
	return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7
}

// ---- BM25 ----

// corpus is fulltext/bench_test.go's generator: 8-30 words drawn from a Zipf distribution
// (s = 1.07, v = 50: the stop-word head cut off) over a synthetic 20k-word vocabulary; half the
// docs also carry "samq", a word a user's memories repeat.
type corpus struct {
	rng   *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

func newCorpus(seed uint64) *corpus {
	rng := rand.New(rand.NewPCG(seed, 1))
	vocab := make([]string, 20000)
	syll := []string{"ka", "lo", "mi", "ru", "te", "zo", "pa", "ne", "vi", "gu", "do", "ba", "si", "fe", "ho", "ju"}
	for i := range vocab {
		var sb strings.Builder
		for n := i + 1; n > 0; n /= len(syll) {
			sb.WriteString(syll[n%len(syll)])
		}
		sb.WriteString("q")
		vocab[i] = sb.String()
	}
	return &corpus{rng: rng, zipf: rand.NewZipf(rng, 1.07, 50, uint64(len(vocab)-1)), vocab: vocab}
}

func (c *corpus) words(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = c.vocab[c.zipf.Uint64()]
	}
	return strings.Join(w, " ")
}

func (c *corpus) text() string {
	return c.words(8+c.rng.IntN(23)) + []string{"", " samq"}[c.rng.IntN(2)]
}

// waitQuiet waits until no file under dir changes (names, sizes) for 1.5 s: scorch has persisted
// and stopped merging, so background work does not compete with the timed searches.
func waitQuiet(dir string) {
	snap := func() string {
		var sb strings.Builder
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if fi, err := d.Info(); err == nil {
					fmt.Fprintf(&sb, "%s:%d;", p, fi.Size())
				}
			}
			return nil
		})
		return sb.String()
	}
	last, quiet := "", 0
	for deadline := time.Now().Add(90 * time.Second); quiet < 6 && time.Now().Before(deadline); {
		time.Sleep(250 * time.Millisecond)
		if cur := snap(); cur == last {
			quiet++
		} else {
			quiet, last = 0, cur
		}
	}
}

func bm25Case(dir string, n int) BM25Case {
	log.Printf("bm25 n=%d: building", n)
	_ = os.RemoveAll(dir)
	c := BM25Case{N: n, Engines: map[string][]Lat{}, BuildS: map[string]float64{}, HitsPerQuery: map[string]float64{}}
	gen := newCorpus(7)
	texts := make([]string, n)
	for i := range texts {
		texts[i] = gen.text()
	}
	qgen := newCorpus(99)
	queries := make([]string, 512)
	for i := range queries {
		queries[i] = qgen.words(3 + i%3)
	}
	const user, k, batch = "u", 10, 512

	// Ours: as memnode opens it (on disk, unsynced batches), one user; without the idle settling, which plain
	// bleve does not have, so that both search the segments their merge policies leave.
	t := time.Now()
	ours, err := fulltext.Open(filepath.Join(dir, "ours"), fulltext.Options{NoSync: true, SettleAfter: -1})
	if err != nil {
		log.Fatal(err)
	}
	for lo := 0; lo < n; lo += batch {
		docs := make([]fulltext.Doc, 0, batch)
		for i := lo; i < min(n, lo+batch); i++ {
			docs = append(docs, fulltext.Doc{ID: "d" + strconv.Itoa(i), UserID: user, Text: texts[i]})
		}
		if err := ours.ApplyWithMarkers(docs, nil, nil); err != nil {
			log.Fatal(err)
		}
	}
	c.BuildS["ours"] = time.Since(t).Seconds()
	waitQuiet(filepath.Join(dir, "ours"))

	// Plain bleve: default mapping with the BM25 scoring model, scorch, default runtime config.
	t = time.Now()
	m := bleve.NewIndexMapping()
	m.ScoringModel = index.BM25Scoring
	plain, err := bleve.NewUsing(filepath.Join(dir, "bleve"), m, scorch.Name, scorch.Name, nil)
	if err != nil {
		log.Fatal(err)
	}
	for lo := 0; lo < n; lo += batch {
		b := plain.NewBatch()
		for i := lo; i < min(n, lo+batch); i++ {
			if err := b.Index("d"+strconv.Itoa(i), map[string]any{"text": texts[i]}); err != nil {
				log.Fatal(err)
			}
		}
		if err := plain.Batch(b); err != nil {
			log.Fatal(err)
		}
	}
	c.BuildS["bleve"] = time.Since(t).Seconds()
	waitQuiet(filepath.Join(dir, "bleve"))

	ctx := context.Background()
	type engine struct {
		name   string
		search func(q string) []string
	}
	engines := []engine{
		{"ours", func(q string) []string {
			h, err := ours.SearchContext(ctx, fulltext.Query{UserID: user, Text: q, K: k})
			if err != nil {
				log.Fatal(err)
			}
			r := make([]string, len(h))
			for i := range h {
				r[i] = h[i].ID
			}
			return r
		}},
		{"bleve", func(q string) []string {
			mq := bleve.NewMatchQuery(q)
			mq.SetField("text")
			res, err := plain.SearchInContext(ctx, bleve.NewSearchRequestOptions(mq, k, 0, false))
			if err != nil {
				log.Fatal(err)
			}
			r := make([]string, len(res.Hits))
			for i, h := range res.Hits {
				r[i] = h.ID
			}
			return r
		}},
	}
	// Warm both (page cache, mmap) and compare their answers.
	hit, total := 0, 0
	for _, q := range queries {
		want := map[string]bool{}
		b := engines[1].search(q)
		for _, id := range b {
			want[id] = true
		}
		o := engines[0].search(q)
		for _, id := range o {
			if want[id] {
				hit++
			}
		}
		total += max(len(b), len(o))
		c.HitsPerQuery["ours"] += float64(len(o)) / float64(len(queries))
		c.HitsPerQuery["bleve"] += float64(len(b)) / float64(len(queries))
	}
	if total > 0 {
		c.OverlapAt10 = float64(hit) / float64(total)
	}
	for rep := range *reps {
		for j := range engines {
			e := engines[(j+rep)%len(engines)]
			c.Engines[e.name] = append(c.Engines[e.name], measure(len(queries), func(i int) { e.search(queries[i]) }))
		}
		log.Printf("bm25 n=%d rep %d: ours p50 %.2f p99 %.2f ms; bleve p50 %.2f p99 %.2f ms", n, rep+1,
			c.Engines["ours"][rep].P50, c.Engines["ours"][rep].P99, c.Engines["bleve"][rep].P50, c.Engines["bleve"][rep].P99)
	}
	_ = ours.Close()
	_ = plain.Close()
	_ = os.RemoveAll(dir)
	freeMemory()
	return c
}
