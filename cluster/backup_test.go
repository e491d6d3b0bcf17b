package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/memcluster/memcluster/backup"
	"github.com/memcluster/memcluster/memory"
)

// A 3-node cluster with a split shard is backed up while 16 clients write; a corrupt copy of the backup is
// refused by a fresh 3-node cluster with nothing written; the good copy restores into it (splits replayed),
// after which every memory acknowledged before the backup began reads back through every node; a second
// restore is refused because the target is no longer fresh. A restore whose fourth shard fails leaves the target
// empty (the splits it replayed stay).
func TestBackupRestoreUnderWrites(t *testing.T) {
	src := makeCluster(t, 3, testConfig())
	src.waitHealthy(src.nodes[0], 30*time.Second, "the source cluster to form")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := src.nodes[0].SplitShard(ctx, 1, true); err != nil {
		t.Fatal(err)
	}
	users := make([]string, 40)
	for i := range users {
		users[i] = fmt.Sprintf("user-%03d", i)
	}
	a := &acked{ids: map[string][]string{}}
	stop := src.background(16, func(w int, done <-chan struct{}) {
		tn := src.nodes[w%3]
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			u := users[(w*7+i)%len(users)]
			if id, err := src.put(tn, u, fmt.Sprintf("note %d of client %d", i, w)); err == nil {
				a.add(u, id)
			}
		}
	})
	waitFor(t, 30*time.Second, "writes before the backup", func() bool { return a.count() >= 300 })
	before := a.snapshot()
	var file bytes.Buffer
	sum, err := src.nodes[1].Backup(ctx, &file, BackupOptions{})
	stop()
	if err != nil {
		t.Fatal(err)
	}
	if sum.Shards != 5 || sum.Memories < uint64(a.countOf(before)) {
		t.Fatalf("summary %+v; %d acknowledged before it began", sum, a.countOf(before))
	}

	dst := makeCluster(t, 3, testConfig())
	dst.waitHealthy(dst.nodes[0], 30*time.Second, "the target cluster to form")
	bad := bytes.Clone(file.Bytes())
	bad[len(bad)/2] ^= 1
	if _, err := dst.nodes[2].Restore(ctx, bytes.NewReader(bad), RestoreOptions{}); !errors.Is(err, memory.ErrInvalid) ||
		!errors.Is(err, backup.ErrCorrupt) {
		t.Fatalf("corrupt backup: %v", err)
	}
	if st, n := dst.nodes[0].MetaState(), dst.memories(t); st.Shards != 4 || n != 0 {
		t.Fatalf("a refused restore changed the target: %d shards, %d memories", st.Shards, n)
	}
	// A shard that fails midway: the shards already installed are emptied again.
	boom := errors.New("injected failure")
	fail := RestoreOptions{Parallel: 1, beforeShard: func(s uint32) error {
		if s == 3 {
			return boom
		}
		return nil
	}}
	if _, err := dst.nodes[1].Restore(ctx, bytes.NewReader(file.Bytes()), fail); !errors.Is(err, boom) {
		t.Fatalf("restore with a failing shard: %v", err)
	}
	if n := dst.memories(t); n != 0 {
		t.Fatalf("a failed restore left %d memories", n)
	}
	res, err := dst.nodes[2].Restore(ctx, bytes.NewReader(file.Bytes()), RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Shards != 5 || res.Memories != sum.Memories || dst.nodes[0].MetaState().Shards != 5 {
		t.Fatalf("restore %+v of %+v", res, sum)
	}
	for u, ids := range before {
		for _, id := range ids {
			for _, tn := range dst.nodes {
				if m, err := dst.get(tn, u, id, false); err != nil || m.ID != id {
					t.Fatalf("memory %s of %s through %s after the restore: %v", id, u, tn.cfg.NodeID, err)
				}
			}
		}
	}
	// Followers got the state by snapshot install: a stale read on every node's own replica finds it too.
	waitFor(t, 30*time.Second, "every replica to hold the restored memories", func() bool {
		for u, ids := range before {
			for _, tn := range dst.nodes {
				if _, err := dst.get(tn, u, ids[len(ids)-1], true); err != nil {
					return false
				}
			}
		}
		return true
	})
	if _, err := dst.nodes[0].Restore(ctx, bytes.NewReader(file.Bytes()), RestoreOptions{}); !errors.Is(err, ErrRefused) {
		t.Fatalf("restore into a cluster holding memories: %v", err)
	}
}

func (a *acked) countOf(m map[string][]string) int {
	n := 0
	for _, ids := range m {
		n += len(ids)
	}
	return n
}

// memories is the memory records every shard's leader reports. A shard whose leader did not answer in time counts
// -1 in the status, so it waits (up to 30 s) for a status in which every shard's leader reported.
func (c *testCluster) memories(t *testing.T) int64 {
	t.Helper()
	var n int64
	waitFor(t, 30*time.Second, "every shard's leader to report its memories", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		n = 0
		for _, s := range c.nodes[0].Status(ctx).Shards {
			if s.Memories < 0 {
				return false
			}
			n += s.Memories
		}
		return true
	})
	return n
}
