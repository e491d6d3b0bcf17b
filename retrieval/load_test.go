package retrieval

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/vector"
)

// TestOpenLoadsEveryVectorInBatches: an index opened over existing records holds the vector of every memory of
// the index's model, including a user with more memories than one load batch, and no vector of another model;
// each scores a query as the index that indexed them as they were written does.
func TestOpenLoadsEveryVectorInBatches(t *testing.T) {
	f := newFixture(t)
	users := map[string]int{"a": vectorBatchMax + 10, "b": 3, "c": 1}
	var all []memory.Memory
	for user, n := range users {
		var batch []memory.Memory
		for i := range n {
			vecs, _ := f.emb.Embed(context.Background(), []string{fmt.Sprintf("%s note %d", user, i)})
			m := memory.Memory{ID: f.ids.New(t0), UserID: user, Type: memory.Episodic, Text: fmt.Sprintf("note %d", i),
				OccurredAt: t0, CreatedAt: t0, Embedding: vecs[0], EmbedModel: f.emb.Fingerprint()}
			if user == "b" && i == 1 {
				m.EmbedModel = "another-model"
			}
			batch, all = append(batch, m), append(all, m)
			if len(batch) == 500 || i == n-1 {
				f.putBatch(batch)
				batch = nil
			}
		}
	}
	vec := vector.New(f.emb.Dim())
	reopened, err := OpenShardIndex(0, f.db, vec, memText(t), f.emb.Fingerprint(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if reopened.Memories() != len(all) || vec.Len() != len(all)-1 || reopened.Unsearchable() != 1 {
		t.Fatalf("reopened: %d memories, %d vectors, %d unsearchable; want %d, %d and 1", reopened.Memories(), vec.Len(),
			reopened.Unsearchable(), len(all), len(all)-1)
	}
	q := all[0].Embedding
	for _, m := range all {
		got, ok := vec.Score(m.UserID, m.ID, q)
		want, wantOK := f.idx.vec.Score(m.UserID, m.ID, q)
		if ok != wantOK || got != want || ok != (m.EmbedModel == f.emb.Fingerprint()) {
			t.Fatalf("%s/%s (%s): score %v %v, written %v %v", m.UserID, m.ID, m.EmbedModel, got, ok, want, wantOK)
		}
	}
}

// failingScan is Records whose shard scan fails after a number of memories, as a read error would.
type failingScan struct {
	Records
	after int
}

func (r failingScan) ScanShard(shard uint32, fn func(memory.Memory) bool) error {
	n := 0
	if err := r.Records.ScanShard(shard, func(m memory.Memory) bool { n++; return n <= r.after && fn(m) }); err != nil {
		return err
	}
	return errors.New("read failed")
}

// TestFailedReloadKeepsVectorsOfWhatItLoaded: a reset whose reload fails partway (the index keeps serving, the
// error is logged) has a vector for every memory whose attributes it loaded, none held back in a load batch.
func TestFailedReloadKeepsVectorsOfWhatItLoaded(t *testing.T) {
	f := newFixture(t)
	var batch []memory.Memory
	for i := range 700 {
		vecs, _ := f.emb.Embed(context.Background(), []string{fmt.Sprintf("note %d", i)})
		batch = append(batch, memory.Memory{ID: f.ids.New(t0), UserID: "a", Type: memory.Episodic,
			Text: fmt.Sprintf("note %d", i), OccurredAt: t0, CreatedAt: t0, Embedding: vecs[0], EmbedModel: f.emb.Fingerprint()})
	}
	f.putBatch(batch)
	f.idx.db = failingScan{Records: f.db, after: 600}
	f.idx.Reset()
	if got, vecs := f.idx.Memories(), f.idx.vec.(*vector.Index).NamespaceLen("a"); got != 600 || vecs != 600 {
		t.Fatalf("after a reload that failed at 600: %d memories, %d vectors", got, vecs)
	}
}
