package cluster

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/memcluster/memcluster/backup"
	"github.com/memcluster/memcluster/tiering"
)

// Cold segments of an external store go into a backup whole, or by reference; a restore finds the included
// ones in its spool and checks that the target's store holds every referenced one, byte for byte.
func TestColdSegmentsIncludedOrReferenced(t *testing.T) {
	ctx := ctxFor(t, 3*time.Minute)
	open := func() *tiering.BlobStore {
		s, err := tiering.OpenBlobStore(ctx, "file://"+t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	src := open()
	segs := map[string][]byte{"v1/0/ada/a.seg": []byte("segment a"), "v1/1/bo/b.seg": bytes.Repeat([]byte("b"), 3<<20)}
	for k, v := range segs {
		if err := src.Put(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	write := func(refs bool) *spooled {
		var buf bytes.Buffer
		w, err := backup.NewWriter(&buf, backup.Manifest{})
		if err != nil {
			t.Fatal(err)
		}
		if err := backupCold(ctx, w, BackupOptions{Cold: src, ColdRefs: refs}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
		sp, err := spool(&buf, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return sp
	}
	inc := write(false)
	if len(inc.cold) != 2 || len(inc.coldRefs) != 0 || inc.sum.ColdObjects != 2 {
		t.Fatalf("included: %+v", inc)
	}
	for _, c := range inc.cold {
		if b, err := os.ReadFile(c.path); err != nil || !bytes.Equal(b, segs[c.key]) {
			t.Fatalf("spooled %s: %d bytes, %v", c.key, len(b), err)
		}
	}
	ref := write(true)
	if len(ref.cold) != 0 || len(ref.coldRefs) != 2 || ref.sum.Bytes != 0 {
		t.Fatalf("referenced: %+v", ref)
	}
	if err := checkColdRefs(ctx, src, ref.coldRefs); err != nil {
		t.Fatalf("refs against the store they came from: %v", err)
	}
	dst := open()
	if err := checkColdRefs(ctx, dst, ref.coldRefs); !errors.Is(err, ErrRefused) {
		t.Fatalf("refs against an empty store: %v", err)
	}
	_ = dst.Put(ctx, "v1/0/ada/a.seg", []byte("segment A"))
	_ = dst.Put(ctx, "v1/1/bo/b.seg", segs["v1/1/bo/b.seg"])
	if err := checkColdRefs(ctx, dst, ref.coldRefs); !errors.Is(err, ErrRefused) {
		t.Fatalf("refs against a store holding other bytes: %v", err)
	}
}
