package embed

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
)

func newHashed(t testing.TB) *Hashed {
	t.Helper()
	h, err := NewHashed(HashedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func cosine(a, b []float32) float64 {
	var dot float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
	}
	return dot
}

func l2(v []float32) float64 { return math.Sqrt(cosine(v, v)) }

func TestHashedDeterministicAndNormalised(t *testing.T) {
	h := newHashed(t)
	texts := []string{"The quick brown fox jumps over the lazy dog", "Ünïcödé wörds — naïve café", "x"}
	a, err := h.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := newHashed(t).Embed(context.Background(), texts)
	for i := range texts {
		if len(a[i]) != 256 {
			t.Fatalf("len = %d, want 256", len(a[i]))
		}
		if n := l2(a[i]); math.Abs(n-1) > 1e-5 {
			t.Errorf("%q: norm %v, want 1", texts[i], n)
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				t.Fatalf("%q: not deterministic at %d", texts[i], j)
			}
		}
	}
	// Case does not matter; the pooled scratch must not leak between calls.
	c, _ := h.Embed(context.Background(), []string{strings.ToUpper(texts[0])})
	if cos := cosine(a[0], c[0]); cos < 0.9999 {
		t.Errorf("upper-case cosine %v, want 1", cos)
	}
}

// TestHashedGolden pins a few coordinates: a change here changes every stored
// vector, so it must come with a new fingerprint version.
func TestHashedGolden(t *testing.T) {
	h := newHashed(t)
	if got, want := h.Fingerprint(), "hashed-v1/d256/n3-5/u1/b0.7/c1/s0.2/fnv1a-sw1"; got != want {
		t.Fatalf("fingerprint %q, want %q", got, want)
	}
	v, _ := h.Embed(context.Background(), []string{"hello world"})
	for _, c := range []struct {
		i    int
		want float32
	}{{8, -0.136234}, {37, 0.136234}, {42, 0.471929}, {44, 0.136234}} {
		if math.Abs(float64(v[0][c.i]-c.want)) > 1e-6 {
			t.Errorf("coord %d = %.6f, want %.6f", c.i, v[0][c.i], c.want)
		}
	}
}

func TestHashedSimilarity(t *testing.T) {
	h := newHashed(t)
	v, _ := h.Embed(context.Background(), []string{
		"I booked a morning flight to Paris",
		"booking an early flight to Berlin",
		"my cat likes tuna",
	})
	near, far := cosine(v[0], v[1]), cosine(v[0], v[2])
	t.Logf("flight/flight %.3f, flight/cat %.3f", near, far)
	if near <= far+0.2 {
		t.Errorf("similar texts not closer: %.3f vs %.3f", near, far)
	}
}

func TestHashedEmpty(t *testing.T) {
	h := newHashed(t)
	v, err := h.Embed(context.Background(), []string{"", "  ...!? ", "a"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if l2(v[i]) != 0 || len(v[i]) != 256 {
			t.Errorf("text %d: want a zero vector of len 256", i)
		}
	}
	if n := l2(v[2]); math.Abs(n-1) > 1e-5 {
		t.Errorf("stopword-only text norm %v, want 1", n)
	}
	none, err := h.Embed(context.Background(), nil)
	if err != nil || len(none) != 0 {
		t.Errorf("nil input: %v, %v", none, err)
	}
}

func TestHashedOptions(t *testing.T) {
	for name, o := range map[string]HashedOptions{
		"dim":    {Dim: -1},
		"ngrams": {MinN: 4, MaxN: 3},
		"off":    {UnigramWeight: -1, BigramWeight: -1, CharWeight: -1},
		"stop":   {StopwordWeight: 2},
		"nan":    {BigramWeight: math.NaN()},
	} {
		if _, err := NewHashed(o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%s: err = %v, want ErrInvalidOptions", name, err)
		}
	}
	h, err := NewHashed(HashedOptions{Dim: 64, CharWeight: -1})
	if err != nil {
		t.Fatal(err)
	}
	if h.Dim() != 64 || !strings.Contains(h.Fingerprint(), "/d64/") || !strings.Contains(h.Fingerprint(), "/c0/") {
		t.Errorf("dim %d, fingerprint %q", h.Dim(), h.Fingerprint())
	}
}

func TestHashedCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := newHashed(t).Embed(ctx, []string{"a"}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

const sentence30 = "Yesterday the team agreed to move the weekly planning meeting to Thursday mornings " +
	"because several engineers in Berlin and Paris kept missing the Monday call after long flights back home"

func BenchmarkHashed30Words(b *testing.B) {
	h := newHashed(b)
	texts := []string{sentence30}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHashedBatch64(b *testing.B) {
	h := newHashed(b)
	texts := make([]string, 64)
	for i := range texts {
		texts[i] = sentence30
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
}
