package retrieval

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/fulltext"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

var benchWords = strings.Fields(`flight paris berlin rome morning evening hotel booked dinner sister brother cat dog
tuna garden roof bees kayak lake river trip meeting project deadline report doctor appointment sleep running
marathon coffee tea breakfast lunch birthday party gift book novel painting sunrise beach mountain hike camping
music concert guitar piano lesson school university exam job interview salary house apartment rent moved city
car train bus bike weather rain snow summer winter spring autumn holiday vacation family friend wedding baby`)

// corpus draws words either uniformly from a 100-word vocabulary (worst case: every term is in ~20% of the
// documents, so BM25 scores most of the user's postings) or Zipf-distributed over 20k words, as natural text is.
type corpus struct {
	r    *rand.Rand
	zipf *rand.Zipf
}

func newCorpus(seed uint64, zipf bool) *corpus {
	c := &corpus{r: rand.New(rand.NewPCG(seed, seed+1))}
	if zipf {
		c.zipf = rand.NewZipf(c.r, 1.07, 2, 20_000-1)
	}
	return c
}

func (c *corpus) word() string {
	if c.zipf == nil {
		return benchWords[c.r.IntN(len(benchWords))]
	}
	i := int(c.zipf.Uint64())
	if i < len(benchWords) {
		return benchWords[i]
	}
	return fmt.Sprintf("w%05d", i)
}

func (c *corpus) text(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = c.word()
	}
	return strings.Join(w, " ")
}

// loadShard fills one shard with n memories of one user (and n/10 of other users), through the state machine in
// batches, as replicas receive them.
func loadShard(b testing.TB, n int, c *corpus) *fixture {
	f := newFixtureWith(b, diskText(b))
	putMemories(b, f, c, n+n/10, func(i int) string {
		if i >= n {
			return fmt.Sprintf("other-%d", i%50)
		}
		return "heavy"
	})
	return f
}

// putMemories puts n memories through f's state machine in batches of 500, the i-th of user(i), and waits until
// they are searchable.
func putMemories(b testing.TB, f *fixture, c *corpus, n int, user func(i int) string) {
	putMemoriesFrom(b, f, n, user, func(string) *corpus { return c })
}

// putMemoriesFrom is putMemories with each user's texts drawn from its own corpus.
func putMemoriesFrom(b testing.TB, f *fixture, n int, user func(i int) string, corpusOf func(user string) *corpus) {
	ctx := context.Background()
	const batch = 500
	for start := 0; start < n; start += batch {
		ms := make([]memory.Memory, 0, batch)
		texts := make([]string, 0, batch)
		for i := start; i < min(start+batch, n); i++ {
			c := corpusOf(user(i))
			t := c.text(8 + c.r.IntN(20))
			texts = append(texts, t)
			ms = append(ms, memory.Memory{ID: f.ids.New(t0.Add(time.Duration(i) * time.Minute)), UserID: user(i),
				Type: memory.Episodic, Text: t, OccurredAt: t0.Add(time.Duration(i) * time.Minute)})
		}
		vecs, _ := f.emb.Embed(ctx, texts)
		for i := range ms {
			ms[i].Embedding, ms[i].EmbedModel, ms[i].CreatedAt = vecs[i], f.emb.Fingerprint(), ms[i].OccurredAt
		}
		cmd, err := storage.EncodePut(ms)
		if err != nil {
			b.Fatal(err)
		}
		f.n++
		f.fsm.ApplyBatch(rawLogs(f.n, cmd))
	}
	if err := f.idx.WaitIndexed(ctx, f.fsm.AppliedIndex()); err != nil {
		b.Fatal(err)
	}
	if ix, ok := f.idx.text.(*fulltext.Index); ok {
		ix.WaitPersisted()
		// The shard holds its memories, settled: the timed searches do not share the cores with the merges
		// and compactions of the load.
		if err := ix.WaitIdle(ctx); err != nil {
			b.Fatal(err)
		}
		// As memnode's index does once a shard has been idle for fulltext.Options.SettleAfter (30 s), without
		// the wait; -settle=false searches the segments the tiered merge policy leaves.
		if *settle {
			if err := ix.Settle(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	for quiet := 0; quiet < 5; {
		time.Sleep(200 * time.Millisecond)
		if m := f.db.Pebble().Metrics(); m.Compact.NumInProgress == 0 && m.Flush.NumInProgress == 0 {
			quiet++
		} else {
			quiet = 0
		}
	}
}

// BenchmarkShardSearch is the shard-side hybrid search (the query embedding is computed outside the timed part)
// for one user holding n memories, k=6, reporting p50 and p99 over the iterations.
func BenchmarkShardSearch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, vocab := range []string{"zipf20k", "uniform100"} {
			b.Run(fmt.Sprintf("memories=%dk/vocab=%s", n/1000, vocab), func(b *testing.B) {
				benchShardSearch(b, n, vocab == "zipf20k", ModeHybrid)
			})
		}
	}
	// The server's default mode, on the natural-text corpus.
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("memories=%dk/vocab=zipf20k/mode=pipeline", n/1000), func(b *testing.B) {
			benchShardSearch(b, n, true, ModePipeline)
		})
	}
}

// settle settles each benchmark shard's full-text index after its load, as an idle shard's is.
var settle = flag.Bool("settle", true, "settle the full-text index after the load, as memnode does once a shard is idle")

// tenantOthers is the shard BenchmarkTenantIndependence fills around the small user: memories of how many users.
var tenantOthers = flag.String("tenant-others", "200000/2000", "memories/users of other tenants beside the small user")

// With -tenant-labels each side's searches carry the pprof label side=alone|beside, so that a -cpuprofile of
// BenchmarkTenantIndependence tells them apart (go tool pprof -tagfocus side=beside). Off by default: the
// labels cost each search a little.
var tenantLabels = flag.Bool("tenant-labels", false, "label each side's searches for pprof (side=alone|beside)")

// BenchmarkTenantIndependence searches a user with 200 memories in a shard that holds nothing else and in one that
// also holds -tenant-others (default 200,000 memories of 2,000 users), the small user's memories interleaved
// with theirs as writes arrive. The aim: the second within 1.2 × the first, p50 and p99.
//
// Both shards are built first, then asked the same queries alternately, one query to each in turn, so that
// whatever else the machine is doing falls on both sides of the ratio (timed one after the other, a shared
// machine's noise was as large as the difference being measured).
func BenchmarkTenantIndependence(b *testing.B) {
	var others, users int
	if _, err := fmt.Sscanf(*tenantOthers, "%d/%d", &others, &users); err != nil || users < 1 {
		b.Fatalf("-tenant-others %q: want memories/users", *tenantOthers)
	}
	alone, beside := smallUserShard(b, 0, users), smallUserShard(b, others, users)
	b.Run(fmt.Sprintf("others=%d/users=%d", others, users), func(b *testing.B) {
		qa := userQueries(alone, newCorpus(3, true), "small", ModeHybrid)
		qb := userQueries(beside, newCorpus(3, true), "small", ModeHybrid)
		la, lb := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
		runtime.GC()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			// Each goes first every other time: the second search finds the caches as the first left them.
			if i%2 == 0 {
				la = append(la, timeSide(b, "alone", alone, qa[i%len(qa)]))
				lb = append(lb, timeSide(b, "beside", beside, qb[i%len(qb)]))
			} else {
				lb = append(lb, timeSide(b, "beside", beside, qb[i%len(qb)]))
				la = append(la, timeSide(b, "alone", alone, qa[i%len(qa)]))
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(segments(alone)), "alone-segments")
		b.ReportMetric(float64(segments(beside)), "beside-segments")
		a50, a99 := percentiles(la)
		b50, b99 := percentiles(lb)
		b.ReportMetric(ms(a50), "alone-p50-ms")
		b.ReportMetric(ms(a99), "alone-p99-ms")
		b.ReportMetric(ms(b50), "beside-p50-ms")
		b.ReportMetric(ms(b99), "beside-p99-ms")
		b.ReportMetric(float64(b50)/float64(a50), "ratio-p50")
		b.ReportMetric(float64(b99)/float64(a99), "ratio-p99")
	})
}

// smallUserShard is a shard holding 200 memories of the user "small" and n memories of users others, the small
// user's memories spread evenly among theirs. Its memories and queries come from corpora of their own, so that
// every such shard holds the same 200 memories of it and is asked the same queries.
func smallUserShard(b *testing.B, n, users int) *fixture {
	const small = 200
	others, mine := newCorpus(1, true), newCorpus(2, true)
	f := newFixtureWith(b, diskText(b))
	every := (n + small) / small
	user := func(i int) string {
		if i%every == 0 && i/every < small {
			return "small"
		}
		return fmt.Sprintf("other-%d", i%users)
	}
	putMemoriesFrom(b, f, n+small, user, func(u string) *corpus {
		if u == "small" {
			return mine
		}
		return others
	})
	return f
}

func benchShardSearch(b *testing.B, n int, zipf bool, mode string) {
	c := newCorpus(1, zipf)
	benchSearchUserMode(b, loadShard(b, n, c), c, "heavy", mode)
}

// benchSearchUserMode times f's shard-side search in mode (the query embedded outside the timed part) for user
// and reports p50 and p99.
func benchSearchUserMode(b *testing.B, f *fixture, c *corpus, user, mode string) {
	queries := userQueries(f, c, user, mode)
	lat := make([]time.Duration, 0, b.N)
	// The load's garbage is collected before the timed searches, which would otherwise pay for its collection:
	// a shard's steady state, not its load, is measured.
	runtime.GC()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lat = append(lat, timeSearch(b, f, queries[i%len(queries)]))
	}
	b.StopTimer()
	b.ReportMetric(float64(segments(f)), "segments") // a search looks up each term in every one
	p50, p99 := percentiles(lat)
	b.ReportMetric(ms(p50), "p50-ms")
	b.ReportMetric(ms(p99), "p99-ms")
}

// segments is the number of segments of f's full-text index, on disk and in memory.
func segments(f *fixture) uint64 {
	ix, ok := f.idx.text.(*fulltext.Index)
	if !ok {
		return 0
	}
	files, mem := ix.Segments()
	return files + mem
}

// userQueries are 64 queries of three words from c for user, embedded (outside any timed part).
func userQueries(f *fixture, c *corpus, user, mode string) []Query {
	queries := make([]Query, 64)
	for i := range queries {
		q := NewQuery(user, c.text(3))
		q.Mode = mode
		vecs, _ := f.emb.Embed(context.Background(), []string{q.Text})
		q.Vector, q.EmbedModel = vecs[0], f.emb.Fingerprint()
		queries[i] = q
	}
	return queries
}

// timeSearch is the latency of f's shard-side search for q.
func timeSearch(b *testing.B, f *fixture, q Query) time.Duration {
	start := time.Now()
	if _, err := f.idx.Search(context.Background(), q); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// timeSide is timeSearch, under the pprof label side when -tenant-labels is set.
func timeSide(b *testing.B, side string, f *fixture, q Query) time.Duration {
	if !*tenantLabels {
		return timeSearch(b, f, q)
	}
	var d time.Duration
	pprof.Do(context.Background(), pprof.Labels("side", side), func(context.Context) { d = timeSearch(b, f, q) })
	return d
}

// percentiles sorts lat and returns its p50 and p99.
func percentiles(lat []time.Duration) (p50, p99 time.Duration) {
	slices.Sort(lat)
	return lat[len(lat)/2], lat[len(lat)*99/100]
}

// ms is d in milliseconds at microsecond resolution, the unit of the p50-ms and p99-ms metrics.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
