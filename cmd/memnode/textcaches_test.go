package main

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memcluster/memcluster/fulltext"
)

// The full-text caches of the indexes sharing a Meter are exported per kind, from the Meter.
func TestTextCachesExported(t *testing.T) {
	m := fulltext.NewMeter()
	ix, err := fulltext.Open(t.TempDir(), fulltext.Options{Meter: m, SettleAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if err := ix.Apply([]fulltext.Doc{{ID: "m1", UserID: "u", Text: "coffee in the morning"}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.SearchContext(context.Background(), fulltext.Query{UserID: "u", Text: "coffee", K: 6}); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	registerTextCaches(reg, m)
	got, _ := gathered(t, reg)
	if len(got) != 8 {
		t.Errorf("%d series, want 8 (4 per cache): %v", len(got), got)
	}
	if got["memcluster_fulltext_cache_bytes/user_postings"] != float64(m.UserPostings.Bytes()) ||
		m.UserPostings.Bytes() == 0 || got["memcluster_fulltext_cache_misses_total/user_postings"] == 0 {
		t.Errorf("after a search: %v; the meter holds %d bytes of users' postings", got, m.UserPostings.Bytes())
	}
}
