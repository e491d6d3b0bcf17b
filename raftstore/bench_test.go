package raftstore

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// Benchmarks mirror a memnode's write path with fsync on, on the disk
// under t.TempDir(). Run them with -count and compare medians (see
// docs/raft-log-store.md); each reports entries/s and per-call latency
// percentiles next to ns/op.

const benchEntrySize = 512

// reportLatency sorts per-call durations and reports p50/p99 in µs.
func reportLatency(b *testing.B, d []time.Duration, entries int, elapsed time.Duration) {
	slices.Sort(d)
	pct := func(p float64) float64 {
		return float64(d[int(p*float64(len(d)-1))]) / float64(time.Microsecond)
	}
	b.ReportMetric(float64(entries)/elapsed.Seconds(), "entries/s")
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

func benchBatch(next *uint64, n int, payload []byte) []*raft.Log {
	logs := make([]*raft.Log, n)
	for i := range logs {
		*next++
		logs[i] = &raft.Log{Index: *next, Term: 1, Type: raft.LogCommand, Data: payload, AppendedAt: time.Now()}
	}
	return logs
}

// BenchmarkStoreLogsOneGroup: one raft group appending one 512 B entry per
// StoreLogs, sequentially — the latency floor of a lightly loaded shard.
func BenchmarkStoreLogsOneGroup(b *testing.B) {
	payload := make([]byte, benchEntrySize)
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			s, closeFn := openOne(b, be, b.TempDir())
			defer closeFn()
			lat := make([]time.Duration, 0, b.N)
			var next uint64
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				logs := benchBatch(&next, 1, payload)
				t0 := time.Now()
				if err := s.StoreLogs(logs); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			elapsed := time.Since(start)
			b.StopTimer()
			reportLatency(b, lat, b.N, elapsed)
		})
	}
}

// BenchmarkStoreLogs16Groups: 16 groups (a memnode's default shard count)
// appending concurrently, one goroutine each. Pebble groups share one DB,
// so their syncs can be group-committed by its WAL; raft-wal and
// raft-boltdb get a dir/file per group, as they would in production.
// b.N is the total number of StoreLogs calls across all groups.
func BenchmarkStoreLogs16Groups(b *testing.B) {
	const groups = 16
	payload := make([]byte, benchEntrySize)
	for _, be := range backends() {
		for _, batch := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/batch=%d", be.name, batch), func(b *testing.B) {
				stores, closeFn := be.openGroups(b, b.TempDir(), groups)
				defer closeFn()
				var claimed atomic.Int64
				lats := make([][]time.Duration, groups)
				var wg sync.WaitGroup
				b.ResetTimer()
				start := time.Now()
				for g, s := range stores {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var next uint64
						for claimed.Add(1) <= int64(b.N) {
							logs := benchBatch(&next, batch, payload)
							t0 := time.Now()
							if err := s.StoreLogs(logs); err != nil {
								b.Error(err)
								return
							}
							lats[g] = append(lats[g], time.Since(t0))
						}
					}()
				}
				wg.Wait()
				elapsed := time.Since(start)
				b.StopTimer()
				reportLatency(b, slices.Concat(lats...), b.N*batch, elapsed)
			})
		}
	}
}

// BenchmarkRaftApply: a 3-node raft group over the in-memory transport,
// each node with its own store (own DB/dir), 512 B commands with 64
// Applies in flight. p50/p99 are per-Apply (enqueue to commit+apply).
func BenchmarkRaftApply(b *testing.B) {
	payload := make([]byte, benchEntrySize)
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			c := newRaftCluster(b, be, 3, testRaftConfig)
			r := c.leader().raft
			type inflight struct {
				f  raft.ApplyFuture
				t0 time.Time
			}
			futures := make(chan inflight, 64)
			lat := make([]time.Duration, 0, b.N)
			done := make(chan error, 1)
			b.ResetTimer()
			start := time.Now()
			go func() {
				var first error
				for f := range futures {
					if err := f.f.Error(); err != nil && first == nil {
						first = err
					}
					lat = append(lat, time.Since(f.t0))
				}
				done <- first
			}()
			for range b.N {
				futures <- inflight{r.Apply(payload, 10*time.Second), time.Now()}
			}
			close(futures)
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			elapsed := time.Since(start)
			b.StopTimer()
			reportLatency(b, lat, b.N, elapsed)
		})
	}
}
