package reembed

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/embed"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

// shard is one shard on a real Pebble DB whose proposals a real state machine applies at once.
type shard struct {
	t     *testing.T
	db    *storage.DB
	fsm   *storage.ShardFSM
	n     uint64
	stale int // what StaleEmbeddings reports; -1: unknown
	scans atomic.Int64
}

func (s *shard) LeaderShards() []uint32 { return []uint32{0} }

func (s *shard) Propose(_ context.Context, _ uint32, cmd []byte) (storage.ApplyResult, error) {
	s.n++
	res, _ := s.fsm.Apply(&raft.Log{Index: s.n, Term: 1, Type: raft.LogCommand, Data: cmd}).(storage.ApplyResult)
	return res, res.Err
}

func (s *shard) StaleEmbeddings(uint32) (int, bool) { return s.stale, s.stale >= 0 }

func (s *shard) ScanShard(id uint32, fn func(memory.Memory) bool) error {
	s.scans.Add(1)
	return s.db.ScanShard(id, fn)
}

func newShard(t *testing.T) *shard {
	db, err := storage.Open("db", storage.Options{FS: vfs.NewMem(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	fsm, err := storage.NewShardFSM(db, 0, nil, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	return &shard{t: t, db: db, fsm: fsm, stale: -1}
}

// A pass re-embeds the memories of another model, through the log; a shard whose indexes report none is not read.
func TestPassReembedsStaleMemoriesAndSkipsCleanShards(t *testing.T) {
	s := newShard(t)
	emb, err := embed.NewHashed(embed.HashedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ids := memory.NewIDSource()
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var ms []memory.Memory
	for i, model := range []string{"old-model", emb.Fingerprint(), "old-model"} {
		ms = append(ms, memory.Memory{ID: ids.New(at), UserID: "u", Type: memory.Episodic, Text: "note " + string(rune('a'+i)),
			OccurredAt: at, CreatedAt: at, EmbedModel: model, Embedding: make([]float32, emb.Dim())})
	}
	cmd, err := storage.EncodePut(ms)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Propose(context.Background(), 0, cmd); err != nil {
		t.Fatal(err)
	}
	j := New(s, s, emb, Options{Logger: slog.New(slog.DiscardHandler)})

	s.stale = 0
	if n, err := j.Pass(context.Background(), 0); err != nil || n != 0 || s.scans.Load() != 0 {
		t.Fatalf("clean shard: %d re-embedded, %v, %d scans", n, err, s.scans.Load())
	}
	s.stale = 2
	if n, err := j.Pass(context.Background(), 0); err != nil || n != 2 || s.scans.Load() != 1 {
		t.Fatalf("stale shard: %d re-embedded, %v, %d scans", n, err, s.scans.Load())
	}
	err = s.db.ScanShard(0, func(m memory.Memory) bool {
		if m.EmbedModel != emb.Fingerprint() {
			t.Errorf("%s still of %s", m.ID, m.EmbedModel)
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	s.stale = -1 // indexes unknown: read the records, which are all current now
	if n, err := j.Pass(context.Background(), 0); err != nil || n != 0 || s.scans.Load() != 2 {
		t.Fatalf("unknown: %d re-embedded, %v, %d scans", n, err, s.scans.Load())
	}
}
