package embed

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
)

// spy records the batches that reach the real hashed embedder.
type spy struct {
	Embedder
	mu    sync.Mutex
	calls [][]string
	err   error
}

func (s *spy) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	s.mu.Lock()
	s.calls = append(s.calls, slices.Clone(texts))
	s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	return s.Embedder.Embed(ctx, texts)
}

func TestCachedSendsOnlyMissesInOneBatch(t *testing.T) {
	inner := &spy{Embedder: newHashed(t)}
	c := NewCached(inner, 100)
	ctx := context.Background()
	first, err := c.Embed(ctx, []string{"a cat", "a dog"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Embed(ctx, []string{"a dog", "a bird", "a cat", "a bird"})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"a cat", "a dog"}, {"a bird"}}
	if len(inner.calls) != 2 || !slices.Equal(inner.calls[0], want[0]) || !slices.Equal(inner.calls[1], want[1]) {
		t.Errorf("inner calls %q, want %q", inner.calls, want)
	}
	if !slices.Equal(got[0], first[1]) || !slices.Equal(got[2], first[0]) || !slices.Equal(got[1], got[3]) {
		t.Error("cached vectors differ from the inner embedder's")
	}
	if s := c.Stats(); s != (CacheStats{Hits: 3, Misses: 3, Len: 3}) {
		t.Errorf("stats %+v", s)
	}
	got[0][0] = 42 // callers own their vectors
	again, _ := c.Embed(ctx, []string{"a dog"})
	if again[0][0] == 42 {
		t.Error("a caller's write reached the cache")
	}
	if c.Fingerprint() != inner.Fingerprint() || c.Dim() != 256 {
		t.Errorf("pass-through: %q %d", c.Fingerprint(), c.Dim())
	}
}

func TestCachedEvictsAndPropagatesErrors(t *testing.T) {
	inner := &spy{Embedder: newHashed(t)}
	c := NewCached(inner, 2)
	ctx := context.Background()
	c.Embed(ctx, []string{"one", "two", "three"})
	if c.Stats().Len != 2 {
		t.Errorf("len %d, want 2", c.Stats().Len)
	}
	inner.err = errors.New("boom")
	if _, err := c.Embed(ctx, []string{"one"}); err == nil || err.Error() != "cached embed: boom" {
		t.Errorf("err = %v", err)
	}
	if _, err := c.Embed(ctx, []string{"three"}); err != nil { // still cached: no inner call
		t.Errorf("hit failed: %v", err)
	}
}

func TestCachedConcurrent(t *testing.T) {
	c := NewCached(newHashed(t), 0)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				if _, err := c.Embed(context.Background(), []string{"shared", string(rune('a' + (g+i)%26))}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if s := c.Stats(); s.Hits+s.Misses != 800 {
		t.Errorf("stats %+v", s)
	}
}

func BenchmarkCachedHit(b *testing.B) {
	c := NewCached(newHashed(b), 0)
	ctx := context.Background()
	texts := []string{sentence30}
	c.Embed(ctx, texts)
	b.ReportAllocs()
	for b.Loop() {
		c.Embed(ctx, texts)
	}
}
