package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
)

// TestEmbeddingModelChangeReembeds restarts a node with another embedding model (the hashed embedder at a
// different dimension has another fingerprint): stored memories are re-embedded through raft and become
// reachable by vector search again.
func TestEmbeddingModelChangeReembeds(t *testing.T) {
	needProcesses(t)
	ctx := context.Background()
	p := newProc(t, "dev")
	p.start("--dev")
	c := p.client(t)
	waitFor(t, 30*time.Second, "a ready node", func() bool { return c.Ready(ctx) == nil })
	m, err := c.Put(ctx, apiv1.PutRequest{UserID: "erin", Text: "Erin keeps bees on the roof of her flat"})
	if err != nil {
		t.Fatal(err)
	}
	p.kill()
	p.start("--dev", "--embed-dim", "128")
	waitFor(t, 30*time.Second, "a ready node after the model change", func() bool { return c.Ready(ctx) == nil })
	waitFor(t, 30*time.Second, "the memory to carry the new model's embedding", func() bool {
		got, err := c.Get(ctx, "erin", m.ID, false)
		return err == nil && strings.Contains(got.EmbedModel, "/d128/")
	})
	vw, tw := 1.0, 0.0
	res, err := c.Search(ctx, apiv1.SearchRequest{UserID: "erin", Query: "bees on the roof", VectorWeight: &vw, TextWeight: &tw})
	if err != nil || len(res.Results) == 0 || res.Results[0].ID != m.ID || res.Results[0].VectorScore <= 0 {
		t.Fatalf("vector-only search after re-embedding: %v %+v", err, res)
	}
}
