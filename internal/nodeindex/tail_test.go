package nodeindex

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/embed"
	"github.com/memcluster/memcluster/fulltext"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/raftstore"
	"github.com/memcluster/memcluster/retrieval"
	"github.com/memcluster/memcluster/storage"
)

// node is one data directory: the Pebble DB (records and raft log) and the index factory over it.
type node struct {
	t    *testing.T
	dir  string
	db   *storage.DB
	log  *raftstore.Store
	logs *bytes.Buffer
	emb  embed.Embedder
	ids  *memory.IDSource
	n    uint64
	fsm  *storage.ShardFSM // the open FSM
}

func newNode(t *testing.T) *node {
	dir := t.TempDir()
	db, err := storage.Open(filepath.Join(dir, "pebble"), storage.Options{FS: vfs.Default, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	store, err := raftstore.New(db.Pebble(), storage.RaftPrefix(0), raftstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embed.NewHashed(embed.HashedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &node{t: t, dir: dir, db: db, log: store, logs: &bytes.Buffer{}, emb: emb, ids: memory.NewIDSource()}
}

// open opens shard 0's indexes as memnode does, and an FSM feeding them.
func (n *node) open() *retrieval.ShardIndex {
	n.t.Helper()
	n.logs.Reset()
	idx, err := Factory(n.dir, n.db, n.emb, Meters{}, nil, slog.New(slog.NewTextHandler(n.logs, nil)))(0)
	if err != nil {
		n.t.Fatal(err)
	}
	n.openFSM(idx.(*retrieval.ShardIndex))
	return idx.(*retrieval.ShardIndex)
}

// openFSM opens the shard's FSM; with a nil indexer it applies without feeding bleve, as when a crash loses
// bleve's unpersisted batches.
func (n *node) openFSM(ixr storage.Indexer) {
	n.t.Helper()
	fsm, err := storage.NewShardFSM(n.db, 0, ixr, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		n.t.Fatal(err)
	}
	n.fsm = fsm
}

// apply appends a command to the raft log and applies it, as raft does.
func (n *node) apply(cmd []byte, err error) {
	n.t.Helper()
	if err != nil {
		n.t.Fatal(err)
	}
	n.n++
	l := &raft.Log{Index: n.n, Term: 1, Type: raft.LogCommand, Data: cmd}
	if err := n.log.StoreLog(l); err != nil {
		n.t.Fatal(err)
	}
	if res, ok := n.fsm.Apply(l).(storage.ApplyResult); ok && res.Err != nil {
		n.t.Fatal(res.Err)
	}
}

func (n *node) put(user, text string) memory.Memory {
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n.n) * time.Minute)
	vecs, _ := n.emb.Embed(context.Background(), []string{text})
	m := memory.Memory{ID: n.ids.New(at), UserID: user, Type: memory.Episodic, Text: text, OccurredAt: at,
		CreatedAt: at, Embedding: vecs[0], EmbedModel: n.emb.Fingerprint()}
	cmd, err := storage.EncodePut([]memory.Memory{m})
	n.apply(cmd, err)
	return m
}

// search searches the shard's bleve index on disk directly (the shard index closed).
func (n *node) search(user, text string) []string {
	n.t.Helper()
	ft, err := fulltext.Open(filepath.Join(n.dir, "index", "shard-0"), fulltext.Options{})
	if err != nil {
		n.t.Fatal(err)
	}
	defer ft.Close()
	hits, err := ft.Search(fulltext.Query{UserID: user, Text: text})
	if err != nil {
		n.t.Fatal(err)
	}
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.ID)
	}
	slices.Sort(ids)
	return ids
}

// crashState writes memories through an indexed open, then more changes (puts, a delete, a forget) with bleve
// not fed, as a SIGKILL leaves a node whose bleve lost its last batches. It returns the ids each check expects.
func crashState(t *testing.T, n *node) (apple, banana, cherry []string) {
	idx := n.open()
	a1 := n.put("alice", "apple pie on sunday")
	a2 := n.put("alice", "apple cider in autumn")
	n.put("carol", "apple orchard visit")
	if err := idx.WaitIndexed(context.Background(), n.n); err != nil {
		t.Fatal(err)
	}
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	n.openFSM(nil)
	b := n.put("alice", "banana bread recipe")
	c := n.put("bob", "cherry blossom trip")
	n.apply(storage.EncodeDelete(storage.DeletePayload{UserID: "alice", IDs: []string{a1.ID}}))
	n.apply(storage.EncodeDeleteUser(storage.DeleteUserPayload{UserID: "carol"}))
	return []string{a2.ID}, []string{b.ID}, []string{c.ID}
}

func TestReopenRefeedsOnlyTheLogTail(t *testing.T) {
	n := newNode(t)
	apple, banana, cherry := crashState(t, n)
	reopen(t, n, `bleve_reindexed="tail of 4 memories" vectors="checkpoint, tail of 3 memories"`)
	checkState(t, n, apple, banana, cherry)
}

func TestReopenRefeedsAllWhenTheLogHasAGap(t *testing.T) {
	n := newNode(t)
	apple, banana, cherry := crashState(t, n)
	if err := n.log.DeleteRange(1, 5); err != nil { // as a compaction after a snapshot would
		t.Fatal(err)
	}
	reopen(t, n, `bleve_reindexed="full: the raft log cannot vouch for entries 4..7" vectors=records`)
	checkState(t, n, apple, banana, cherry)
}

// reopen opens and closes the shard's indexes, and checks that the load logged want.
func reopen(t *testing.T, n *node, want string) {
	t.Helper()
	if err := n.open().Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(n.logs.String(), want) {
		t.Fatalf("the index load did not log %s:\n%s", want, n.logs)
	}
}

func checkState(t *testing.T, n *node, apple, banana, cherry []string) {
	t.Helper()
	for _, c := range []struct {
		user, text string
		want       []string
	}{
		{"alice", "apple", apple}, {"alice", "banana", banana}, {"bob", "cherry", cherry}, {"carol", "apple", nil},
	} {
		if got := n.search(c.user, c.text); !slices.Equal(got, c.want) {
			t.Errorf("%s %q: got %v, want %v", c.user, c.text, got, c.want)
		}
	}
}
