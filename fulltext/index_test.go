package fulltext

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestReopenKeepsDocsAndMarkers(t *testing.T) {
	dir := t.TempDir()
	ix, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, ix, []Doc{
		{ID: "a", UserID: "u", Text: "the lighthouse keeper logs the storm"},
		{ID: "b", UserID: "u", Text: "bake sourdough on sunday"},
	})
	if err := ix.SetMarker("applied", []byte("42")); err != nil {
		t.Fatal(err)
	}
	if err := ix.ApplyWithMarkers([]Doc{{ID: "c", UserID: "u", Text: "storm warning"}}, nil,
		map[string][]byte{"fingerprint": []byte("fp1")}); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	ix = openTest(t, dir, Options{})
	if n, err := ix.DocCount(); err != nil || n != 3 {
		t.Fatalf("DocCount = %d, %v; want 3", n, err)
	}
	for k, want := range map[string]string{"applied": "42", "fingerprint": "fp1"} {
		if v, err := ix.Marker(k); err != nil || string(v) != want {
			t.Fatalf("Marker(%q) = %q, %v; want %q", k, v, err, want)
		}
	}
	if v, err := ix.Marker("never-set"); err != nil || v != nil {
		t.Fatalf("unset marker = %q, %v; want nil", v, err)
	}
	got := ids(mustSearch(t, ix, Query{UserID: "u", Text: "storms"}))
	if !sameSet(got, []string{"a", "c"}) {
		t.Fatalf("after reopen got %v", got)
	}
}

func TestOutdated(t *testing.T) {
	dir := t.TempDir()
	ix, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, ix, []Doc{{ID: "a", UserID: "u", Text: "x"}})
	// Simulate an index written by an older build.
	if err := ix.b.SetInternal([]byte(versionKey), []byte("0")); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{}); !errors.Is(err, ErrOutdated) {
		t.Fatalf("Open old version: %v; want ErrOutdated", err)
	}

	// The owner's rebuild path.
	if err := Destroy(dir); err != nil {
		t.Fatal(err)
	}
	ix, err = Open(dir, Options{})
	if err != nil {
		t.Fatalf("Open after Destroy: %v", err)
	}
	if n, _ := ix.DocCount(); n != 0 {
		t.Fatalf("rebuilt index has %d docs", n)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	// A different analyzer is a different mapping.
	if _, err := Open(dir, Options{Analyzer: AnalyzerStandard}); !errors.Is(err, ErrOutdated) {
		t.Fatalf("Open with other analyzer: %v; want ErrOutdated", err)
	}
}

func TestDestroyRefusesForeignDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "precious"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Destroy(dir); !errors.Is(err, ErrNotIndex) {
		t.Fatalf("Destroy foreign dir: %v; want ErrNotIndex", err)
	}
	if err := Destroy(filepath.Join(dir, "missing")); err != nil {
		t.Fatalf("Destroy missing dir: %v", err)
	}
}

func TestOptionsValidation(t *testing.T) {
	for _, o := range []Options{
		{InMemory: true, Analyzer: "klingon"},
		{InMemory: true, MaxBatch: -1},
		{InMemory: true, DefaultK: 50, MaxK: 20},
	} {
		if _, err := Open("", o); !errors.Is(err, ErrInvalid) {
			t.Errorf("Open(%+v) = %v; want ErrInvalid", o, err)
		}
	}
	if _, err := Open("", Options{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Open on-disk without dir = %v; want ErrInvalid", err)
	}
}

func TestClosed(t *testing.T) {
	ix, err := Open("", Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Search(Query{UserID: "u", Text: "x"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Search after Close: %v; want ErrClosed", err)
	}
	if err := ix.Apply([]Doc{{ID: "a", UserID: "u"}}, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Apply after Close: %v; want ErrClosed", err)
	}
}

// A second Close, in memory or on disk, returns ErrClosed and does not panic (scorch's own Close does).
func TestCloseTwice(t *testing.T) {
	for _, opts := range []Options{{InMemory: true}, {}} {
		ix, err := Open(t.TempDir(), opts)
		if err != nil {
			t.Fatal(err)
		}
		mustApply(t, ix, []Doc{{ID: "a", UserID: "u", Text: "violin"}})
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
		if err := ix.Close(); !errors.Is(err, ErrClosed) {
			t.Errorf("second Close (in memory %v): %v; want ErrClosed", opts.InMemory, err)
		}
	}
}

func TestDeleteAndReplace(t *testing.T) {
	modes(t, func(t *testing.T, ix *Index) {
		mustApply(t, ix, []Doc{
			{ID: "a", UserID: "u", Text: "violin lesson on tuesday"},
			{ID: "b", UserID: "u", Text: "violin strings are worn"},
		})
		mustApply(t, ix, []Doc{{ID: "b", UserID: "u", Text: "cello strings are worn"}}, "a")
		if got := ids(mustSearch(t, ix, Query{UserID: "u", Text: "violin"})); len(got) != 0 {
			t.Fatalf("violin after delete+replace: %v", got)
		}
		if got := ids(mustSearch(t, ix, Query{UserID: "u", Text: "cello"})); !sameSet(got, []string{"b"}) {
			t.Fatalf("cello: %v", got)
		}
		if n, _ := ix.DocCount(); n != 1 {
			t.Fatalf("DocCount = %d; want 1", n)
		}
		mustApply(t, ix, nil, "does-not-exist") // deleting a missing id is fine (replay)
	})
}

func TestApplyRejectsWholeBatch(t *testing.T) {
	ix := openTest(t, "", Options{InMemory: true, MaxBatch: 3})
	bad := []Doc{{ID: "a", UserID: "u", Text: "kept?"}, {ID: "b", Text: "no user"}}
	if err := ix.Apply(bad, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Apply with invalid doc: %v; want ErrInvalid", err)
	}
	if err := ix.Apply([]Doc{{ID: "a", UserID: "u"}}, []string{"x", "y", "z"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Apply over MaxBatch: %v; want ErrInvalid", err)
	}
	if n, _ := ix.DocCount(); n != 0 {
		t.Fatalf("rejected batches left %d docs", n)
	}
}

// TestApplyAtomicVisibility checks that a concurrent searcher sees a batch entirely or not at all.
func TestApplyAtomicVisibility(t *testing.T) {
	modes(t, func(t *testing.T, ix *Index) {
		const batches, size = 8, 64
		var wg sync.WaitGroup
		done := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				hits, err := ix.Search(Query{UserID: "u", Text: "quartz", K: batches * size})
				if err != nil {
					t.Error(err)
					return
				}
				if len(hits)%size != 0 {
					t.Errorf("saw %d docs: a partial batch", len(hits))
					return
				}
			}
		}()
		for b := 0; b < batches; b++ {
			put := make([]Doc, size)
			for i := range put {
				put[i] = Doc{ID: docID("u", b*size+i), UserID: "u", Text: "quartz crystal"}
			}
			mustApply(t, ix, put)
		}
		close(done)
		wg.Wait()
		if got := mustSearch(t, ix, Query{UserID: "u", Text: "quartz", K: 1000}); len(got) != batches*size {
			t.Fatalf("final count %d", len(got))
		}
	})
}

// A process killed while bleve wrote a new index's metadata left a directory that never opened again (found
// by chaos.TestLeaderFailover): such an index is reported as ErrDamaged, so its owner destroys and rebuilds it.
func TestDamagedIndexIsReportedAndRebuilt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shard-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, metaFile), []byte(`{"storage":"sco`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{}); !errors.Is(err, ErrDamaged) {
		t.Fatalf("open of a torn index: %v, want ErrDamaged", err)
	}
	if err := Destroy(dir); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("open after destroy: %v", err)
	}
	ix.Close()
	ix, err = Open(dir, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	ix.Close()
}
