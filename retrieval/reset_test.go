package retrieval

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/memcluster/memcluster/fulltext"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

// Restoring a snapshot over a shard holding more memories than one bleve batch takes clears its full-text
// index all the same (a restore into a populated replica, or emptying a shard when a restore is undone).
func TestResetClearsLargeFullTextIndex(t *testing.T) {
	f := newFixture(t)
	const n = 5000
	var batch []memory.Memory
	for i := range n {
		vecs, _ := f.emb.Embed(context.Background(), []string{"x"})
		batch = append(batch, memory.Memory{ID: f.ids.New(t0), UserID: "u", Type: memory.Episodic,
			Text: fmt.Sprintf("note %d", i), OccurredAt: t0, CreatedAt: t0, Embedding: vecs[0], EmbedModel: f.emb.Fingerprint()})
		if len(batch) == 500 {
			f.putBatch(batch)
			batch = nil
		}
	}
	text := f.idx.text.(*fulltext.Index)
	if err := f.idx.WaitIndexed(context.Background(), f.fsm.AppliedIndex()); err != nil {
		t.Fatal(err)
	}
	if c, _ := text.DocCount(); c != n {
		t.Fatalf("%d documents indexed, want %d", c, n)
	}
	var empty bytes.Buffer
	if err := storage.WriteEmptySnapshot(&empty, f.n+1, 1); err != nil {
		t.Fatal(err)
	}
	if err := f.fsm.Restore(io.NopCloser(&empty)); err != nil {
		t.Fatal(err)
	}
	if c, err := text.DocCount(); err != nil || c != 0 || f.idx.Memories() != 0 {
		t.Fatalf("after restoring an empty shard: %d documents (%v), %d memories", c, err, f.idx.Memories())
	}
}
