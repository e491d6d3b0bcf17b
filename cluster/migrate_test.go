package cluster

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// untar unpacks a .tar.gz of testdata into dir.
func untar(t *testing.T, archive, dir string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			var out *os.File
			if out, err = os.Create(p); err == nil {
				_, err = io.Copy(out, tr)
				out.Close()
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// A data directory written by the build before shard ranges (meta format 1: `memnode --dev --shards 4`, 20
// users with one memory each, testdata/datadir-v1.*) starts on this build: every user routes where FNV-1a mod
// 4 put it, every memory is readable, and a shard of it splits with every memory still readable after.
func TestOldDataDirMigrates(t *testing.T) {
	dir := t.TempDir()
	untar(t, "testdata/datadir-v1.tar.gz", dir)
	var want []struct{ User, ID string }
	b, err := os.ReadFile("testdata/datadir-v1.json")
	if err == nil {
		err = json.Unmarshal(b, &want)
	}
	if err != nil || len(want) != 20 {
		t.Fatalf("testdata: %d memories, %v", len(want), err)
	}
	c := newTestCluster(t, testConfig())
	cfg := c.base
	cfg.NodeID, cfg.Shards, cfg.Replicas, cfg.BootstrapExpect = "dev", 4, 1, 1
	cfg.DataDir = dir
	cfg.RaftAddr, cfg.GossipAddr, cfg.HTTPAddr = freeAddr(t), freeAddr(t), freeAddr(t)
	tn := &testNode{cfg: cfg, dir: dir}
	c.start(tn)
	c.nodes = append(c.nodes, tn)
	t.Cleanup(tn.stop)
	c.waitHealthy(tn, 30*time.Second, "the old data dir's node to serve")

	st := tn.MetaState()
	if st.Buckets != 4 || len(st.Ranges) != 4 || st.Version != metaFormat {
		t.Fatalf("meta state read as buckets %d, %d ranges, format %d", st.Buckets, len(st.Ranges), st.Version)
	}
	readAll := func(when string) {
		for _, m := range want {
			if _, err := c.get(tn, m.User, m.ID, false); err != nil {
				t.Fatalf("%s: memory %s of %s: %v", when, m.ID, m.User, err)
			}
		}
	}
	for _, m := range want {
		if got := st.Route(m.User); got != ShardFor(m.User, 4) {
			t.Fatalf("%s routes to shard %d, the old layout put it on %d", m.User, got, ShardFor(m.User, 4))
		}
	}
	readAll("before the split")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := tn.SplitShard(ctx, 2, true); err != nil {
		t.Fatalf("split shard 2: %v", err)
	}
	readAll("after splitting shard 2")
	if _, err := c.put(tn, want[2].User, "a memory written after the upgrade and the split"); err != nil {
		t.Fatalf("write after the split: %v", err)
	}
}

// A format-1 meta snapshot (an older build's) restores as every shard owning its whole bucket; a newer
// format than this build knows is refused.
func TestMetaSnapshotV1Migrates(t *testing.T) {
	f := newMetaFSM(slog.New(slog.DiscardHandler), nil)
	v1 := `{"version":1,"shards":4,"replicas":1,"nodes":{"a":{"id":"a"}},"placement":[["a"],["a"],["a"],["a"]],"epoch":3}`
	if err := f.Restore(io.NopCloser(strings.NewReader(v1))); err != nil {
		t.Fatal(err)
	}
	st := f.State()
	if st.Buckets != 4 || st.Version != metaFormat {
		t.Fatalf("restored as %+v", st)
	}
	for i := range 100 {
		u := fmt.Sprintf("u%d", i)
		if st.Route(u) != ShardFor(u, 4) {
			t.Fatalf("%s routes to %d, modulo says %d", u, st.Route(u), ShardFor(u, 4))
		}
	}
	if err := f.Restore(io.NopCloser(strings.NewReader(`{"version":3,"shards":4}`))); err == nil {
		t.Fatal("a format-3 snapshot was accepted")
	}
}
