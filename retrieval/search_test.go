package retrieval

import (
	"context"
	"flag"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/embed"
	"github.com/memcluster/memcluster/fulltext"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
	"github.com/memcluster/memcluster/vector"
)

// fixture is one shard with real Pebble (in-memory FS), a real bleve index and a real vector index, fed through
// the real state machine.
type fixture struct {
	t   testing.TB
	db  *storage.DB
	fsm *storage.ShardFSM
	idx *ShardIndex
	emb embed.Embedder
	ids *memory.IDSource
	n   uint64
	// cmds are the commands applied, by raft index: the raft log a TailReader reads.
	cmds logTail
	// indexers, when set, is the Indexers the checkpoint tests' opens share (openModel).
	indexers *Indexers
}

func newFixture(t testing.TB) *fixture { return newFixtureWith(t, memText(t)) }

// diskText is the full-text index as memnode opens it: on disk, NoSync. Benchmarks use it: an in-memory scorch
// index never merges its segments (no persister runs), so a large one is searched over hundreds of segments.
func diskText(t testing.TB) *fulltext.Index {
	t.Helper()
	ix, err := fulltext.Open(t.TempDir(), fulltext.Options{NoSync: true, DenseMinPostings: *denseMin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// denseMin is fulltext.Options.DenseMinPostings for the on-disk indexes of tests and benchmarks: -1 compares
// against bleve's own evaluation of every query.
var denseMin = flag.Int("dense-min", 0, "fulltext DenseMinPostings of diskText indexes (0: the default, -1: never dense)")

func newFixtureWith(t testing.TB, text TextIndex) *fixture {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	db, err := storage.Open("db", storage.Options{FS: vfs.NewMem(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	emb, err := embed.NewHashed(embed.HashedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	idx, err := OpenShardIndex(0, db, vector.New(emb.Dim()), text, emb.Fingerprint(), log)
	if err != nil {
		t.Fatal(err)
	}
	fsm, err := storage.NewShardFSM(db, 0, idx, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, db: db, fsm: fsm, idx: idx, emb: emb, ids: memory.NewIDSource(), cmds: logTail{}}
}

func (f *fixture) put(m memory.Memory) memory.Memory {
	f.t.Helper()
	vecs, _ := f.emb.Embed(context.Background(), []string{m.Text})
	minted := m.OccurredAt
	if minted.Before(t0) {
		minted = t0 // ULIDs hold no time before 1970
	}
	m.ID = f.ids.New(minted)
	m.Embedding, m.EmbedModel, m.CreatedAt = vecs[0], f.emb.Fingerprint(), m.OccurredAt
	if m.Type == "" {
		m.Type = memory.Episodic
	}
	f.apply(storage.EncodePut([]memory.Memory{m}))
	return m
}

// apply applies cmd as the next raft entry.
func (f *fixture) apply(cmd []byte, err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
	f.n++
	f.cmds[f.n] = cmd
	if res, ok := f.fsm.Apply(&raft.Log{Index: f.n, Term: 1, Type: raft.LogCommand, Data: cmd}).(storage.ApplyResult); ok && res.Err != nil {
		f.t.Fatal(res.Err)
	}
}

// putBatch applies ms as one raft entry, as a batch put does (the ids and embeddings are the caller's).
func (f *fixture) putBatch(ms []memory.Memory) {
	f.t.Helper()
	f.apply(storage.EncodePut(ms))
}

func (f *fixture) search(q Query) []Result {
	f.t.Helper()
	vecs, _ := f.emb.Embed(context.Background(), []string{q.Text})
	q.Vector, q.EmbedModel = vecs[0], f.emb.Fingerprint()
	if err := f.idx.WaitIndexed(context.Background(), f.fsm.AppliedIndex()); err != nil {
		f.t.Fatal(err)
	}
	res, err := f.idx.Search(context.Background(), q)
	if err != nil {
		f.t.Fatal(err)
	}
	return res
}

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func TestHybridScoresAndIsolation(t *testing.T) {
	f := newFixture(t)
	morning := f.put(memory.Memory{UserID: "alice", Text: "I prefer morning flights", OccurredAt: t0})
	f.put(memory.Memory{UserID: "alice", Text: "My cat Tom likes tuna", OccurredAt: t0})
	f.put(memory.Memory{UserID: "bob", Text: "I prefer morning flights too", OccurredAt: t0})

	q := NewQuery("alice", "morning flights")
	res := f.search(q)
	if len(res) == 0 || res[0].Memory.ID != morning.ID {
		t.Fatalf("top result %+v", res)
	}
	for _, r := range res {
		if r.Memory.UserID != "alice" {
			t.Fatalf("alice's search returned %s's memory", r.Memory.UserID)
		}
		want := (0.7*math.Max(r.VectorScore, 0) + 0.3*r.TextScore) * r.Recency
		if math.Abs(r.Score-want) > 1e-9 || r.Score < DefaultMinScore || r.Memory.Embedding != nil {
			t.Fatalf("score %v, components %+v", r.Score, r)
		}
	}
	if res[0].TextScore != 1 {
		t.Fatalf("best BM25 hit should normalise to 1, got %v", res[0].TextScore)
	}
}

func TestFiltersAndMinScore(t *testing.T) {
	f := newFixture(t)
	old := f.put(memory.Memory{UserID: "u", Text: "kayak trip on the lake", OccurredAt: t0.AddDate(-1, 0, 0), Tags: []string{"trip"}})
	recent := f.put(memory.Memory{UserID: "u", Text: "kayak trip on the river", OccurredAt: t0, Tags: []string{"trip", "river"}, AgentID: "a1"})
	f.put(memory.Memory{UserID: "u", Type: memory.Semantic, Text: "likes kayak trips", OccurredAt: t0})

	all := NewQuery("u", "kayak trip")
	all.MinScore = 0
	if got := len(f.search(all)); got != 3 {
		t.Fatalf("unfiltered: %d results", got)
	}
	cases := map[string]func(*Query){
		"tags":  func(q *Query) { q.Tags = []string{"river"} },
		"agent": func(q *Query) { q.AgentID = "a1" },
		"from":  func(q *Query) { q.From = t0.AddDate(0, -1, 0); q.Types = []memory.Type{memory.Episodic} },
	}
	for name, mod := range cases {
		q := all
		mod(&q)
		res := f.search(q)
		if len(res) != 1 || res[0].Memory.ID != recent.ID {
			t.Fatalf("%s filter: %+v", name, res)
		}
	}
	q := all
	q.Types = []memory.Type{memory.Semantic}
	if res := f.search(q); len(res) != 1 || res[0].Memory.Type != memory.Semantic {
		t.Fatalf("type filter: %+v", res)
	}
	// Recency decay ranks the recent trip above the year-old one and shows the factor applied.
	q = all
	q.RecencyHalfLife, q.Now = 30*24*time.Hour, t0
	q.Types = []memory.Type{memory.Episodic}
	res := f.search(q)
	if res[0].Memory.ID != recent.ID || res[1].Memory.ID != old.ID || res[1].Recency >= 0.01 || res[0].Recency != 1 {
		t.Fatalf("recency: %+v", res)
	}
	// A high min score drops everything weak.
	q = all
	q.MinScore = 0.99
	if res := f.search(q); len(res) != 0 {
		t.Fatalf("min score 0.99 kept %d", len(res))
	}
}

// The BM25 side checks a time range before it ranks (occurred_at is not in bleve): the one memory in range is
// found even when many better BM25 matches outside it would fill the candidates.
func TestTextSideKeepsTimeRangeBeforeRanking(t *testing.T) {
	f := newFixture(t)
	for i := range 20 {
		f.put(memory.Memory{UserID: "u", Text: "kayak kayak kayak", OccurredAt: t0.AddDate(-1, 0, -i)})
	}
	in := f.put(memory.Memory{UserID: "u", Text: "a kayak trip on a long and windy river in the north", OccurredAt: t0})
	q := NewQuery("u", "kayak")
	q.VectorWeight, q.TextWeight, q.MinScore, q.K, q.CandidateMultiplier = 0, 1, 0, 1, 1
	q.From, q.To = t0.AddDate(0, -1, 0), t0.AddDate(0, 1, 0)
	res := f.search(q)
	if len(res) != 1 || res[0].Memory.ID != in.ID {
		t.Fatalf("time-bounded BM25 search: %+v", res)
	}
}

func TestDeletedMemoryLeavesResults(t *testing.T) {
	f := newFixture(t)
	m := f.put(memory.Memory{UserID: "u", Text: "bees on the roof", OccurredAt: t0})
	cmd, _ := storage.EncodeDelete(storage.DeletePayload{UserID: "u", IDs: []string{m.ID}})
	f.n++
	f.fsm.Apply(&raft.Log{Index: f.n, Term: 1, Type: raft.LogCommand, Data: cmd})
	q := NewQuery("u", "bees roof")
	q.MinScore = 0
	if res := f.search(q); len(res) != 0 {
		t.Fatalf("deleted memory still found: %+v", res)
	}
}

func rawLogs(index uint64, cmd []byte) []*raft.Log {
	return []*raft.Log{{Index: index, Term: 1, Type: raft.LogCommand, Data: cmd}}
}

// k at its maximum must not ask the full-text index for more candidates than it serves (it once did: 500).
func TestMaxKSearchWorks(t *testing.T) {
	f := newFixture(t)
	f.put(memory.Memory{UserID: "u", Text: "one memory about kites", OccurredAt: t0})
	for _, mode := range []string{"", "pipeline"} {
		q := NewQuery("u", "kites")
		q.K, q.MinScore, q.Mode = MaxK, 0, mode
		if res := f.search(q); len(res) != 1 {
			t.Fatalf("mode %q: %d results", mode, len(res))
		}
	}
}
