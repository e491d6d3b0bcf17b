package retrieval

import (
	"context"
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
	if reopened.Memories() != len(all) || vec.Len() != len(all)-1 {
		t.Fatalf("reopened: %d memories, %d vectors; want %d and %d", reopened.Memories(), vec.Len(), len(all), len(all)-1)
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
