package cluster

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/raftstore"
)

// BenchmarkLeaderLogWrite compares a leader that writes its log beside its followers (the log cache, raftstore.Cache, stages new
// entries, raft.LogStager) with one that writes it before replicating (the same cache with staging hidden):
// three raft nodes, each log in its own Pebble with fsync on the disk under TempDir, over raft's in-memory
// transport, so that the disk writes are what differs. 1 and 16 clients apply 512-byte commands; it reports
// the per-apply p50 and p99 and applies a second.
func BenchmarkLeaderLogWrite(b *testing.B) {
	for _, clients := range []int{1, 16} {
		for _, staged := range []bool{true, false} {
			b.Run(fmt.Sprintf("clients=%d/staged=%v", clients, staged), func(b *testing.B) {
				leader := benchRaftGroup(b, staged)
				lat := make([][]time.Duration, clients)
				var wg sync.WaitGroup
				per := max(b.N/clients, 1)
				b.ResetTimer()
				start := time.Now()
				for c := range clients {
					wg.Add(1)
					go func() {
						defer wg.Done()
						cmd := make([]byte, 512)
						for range per {
							t0 := time.Now()
							if err := leader.Apply(cmd, 10*time.Second).Error(); err != nil {
								b.Error(err)
								return
							}
							lat[c] = append(lat[c], time.Since(t0))
						}
					}()
				}
				wg.Wait()
				elapsed := time.Since(start)
				b.StopTimer()
				all := slices.Concat(lat...)
				slices.Sort(all)
				if len(all) == 0 {
					return
				}
				b.ReportMetric(float64(len(all))/elapsed.Seconds(), "applies/s")
				b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
			})
		}
	}
}

type quietPebble struct{}

func (quietPebble) Infof(string, ...any)           {}
func (quietPebble) Errorf(string, ...any)          {}
func (quietPebble) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }

// sequentialLog hides the log cache's staging from raft.
type sequentialLog struct{ raft.LogStore }

func benchRaftGroup(b *testing.B, staged bool) *raft.Raft {
	b.Helper()
	trans, servers := inmemNetwork(3)
	var rafts []*raft.Raft
	for i := range 3 {
		db, err := pebble.Open(filepath.Join(b.TempDir(), "db"), &pebble.Options{Logger: quietPebble{}})
		if err != nil {
			b.Fatal(err)
		}
		store, err := raftstore.New(db, []byte("r1"), raftstore.Options{})
		if err != nil {
			b.Fatal(err)
		}
		var logs raft.LogStore = raftstore.NewCache(store, raftstore.CacheEntries, raftstore.CacheBytes)
		if !staged {
			logs = sequentialLog{logs}
		}
		c := raft.DefaultConfig()
		c.LocalID = servers[i].ID
		c.Logger = hclog.NewNullLogger()
		c.BatchApplyCh, c.MaxAppendEntries = true, 256
		r, err := raft.NewRaft(c, &countingFSM{}, logs, store, raft.NewInmemSnapshotStore(), trans[i])
		if err != nil {
			b.Fatal(err)
		}
		rafts = append(rafts, r)
		b.Cleanup(func() { r.Shutdown().Error(); db.Close() })
	}
	if err := rafts[0].BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, r := range rafts {
			if r.State() == raft.Leader {
				return r
			}
		}
	}
	b.Fatal("no leader")
	return nil
}
