package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/storage"
)

// TestReplayRebuildsReplica checks the FSM-level property on its own, without faults: every replica's latest
// snapshot, restored into a fresh ShardFSM, plus the replica's log after it, gives the replica's exact keyspace.
// The run is shaped so the check is not vacuous (every replica snapshotted, entries follow the snapshot), and a
// stray key written into one replica must make the comparison fail.
func TestReplayRebuildsReplica(t *testing.T) {
	opts := Options{Seed: 1}.withDefaults()
	c, err := newCluster(3, 0, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	if err := c.converge(convergeTimeout); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := &client{c: c, rec: &recorder{start: time.Now()}, opts: opts}
	write := func(i int) {
		id := fmt.Sprintf("m%03d", i)
		cl.do(ctx, input{Kind: opPut, User: fmt.Sprintf("user%d", i%3), IDs: []string{id}})
		if i%4 == 3 {
			cl.do(ctx, input{Kind: opDelete, User: fmt.Sprintf("user%d", i%3), IDs: []string{id}, Req: id})
		}
	}
	for i := range 60 {
		write(i)
	}
	waitSnapshots(t, c)
	stopSnapshots(t, c)
	// Taken after snapshots stopped: these stay in the log, after every replica's latest snapshot.
	for i := 60; i < 64; i++ {
		write(i)
	}
	if err := c.converge(convergeTimeout); err != nil {
		t.Fatal(err)
	}
	c.stopRaft()
	discard := slog.New(slog.DiscardHandler)
	res := &Result{}
	if err := checkReplicas(c.reps, res, discard); err != nil {
		t.Fatal(err)
	}
	for i, st := range res.Replays {
		if st.SnapshotIndex == 0 || st.Entries == 0 {
			t.Errorf("n%d: replay used snapshot %d + %d entries; want both", i, st.SnapshotIndex, st.Entries)
		}
	}
	// One stray key in n0 must fail both comparisons: against the other replicas and against n0's own replay.
	if err := c.reps[0].db.Pebble().Set(storage.MemoryKey(shardID, "user0", "stray"), []byte{1}, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	err = checkReplicas(c.reps, &Result{}, discard)
	if !errors.Is(err, ErrDiverged) || !errors.Is(err, ErrReplayMismatch) {
		t.Errorf("a stray key in n0: got %v, want ErrDiverged and ErrReplayMismatch", err)
	}
}

func stopSnapshots(t *testing.T, c *cluster) {
	t.Helper()
	for _, r := range c.reps {
		conf := raftConfig(r.id, slog.New(slog.DiscardHandler))
		err := r.raft.ReloadConfig(raft.ReloadableConfig{TrailingLogs: conf.TrailingLogs, SnapshotInterval: conf.SnapshotInterval,
			SnapshotThreshold: math.MaxUint32, HeartbeatTimeout: conf.HeartbeatTimeout, ElectionTimeout: conf.ElectionTimeout})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func waitSnapshots(t *testing.T, c *cluster) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, r := range c.reps {
		for {
			metas, err := r.snaps.List()
			if err != nil {
				t.Fatal(err)
			}
			if len(metas) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("n%d took no snapshot", r.id)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
