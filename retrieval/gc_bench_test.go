package retrieval

import (
	"flag"
	"fmt"
	"runtime"
	"runtime/metrics"
	"testing"
)

var gcMemories = flag.Int("gc-memories", 100_000, "memories of 1,000 users in the shard whose in-memory state BenchmarkIndexStateGC collects")

// BenchmarkIndexStateGC is what a shard replica's in-memory state (vector rows and their ids, attributes,
// timelines) costs the garbage collector: a shard of -gc-memories memories is loaded, and each iteration is one
// forced collection of an otherwise idle heap. It reports the live heap objects and the scannable bytes a
// memory, and the collector's marking CPU a cycle. A loaded node's collections cost far more than this
// (docs/benchmarks.md): the rest is what is in flight, not what is at rest.
func BenchmarkIndexStateGC(b *testing.B) {
	c := newCorpus(1, true)
	f := newFixtureWith(b, diskText(b))
	putMemories(b, f, c, *gcMemories, func(i int) string { return fmt.Sprintf("user-%d", i%1000) })
	f.cmds = logTail{} // the test's raft log, which a node keeps on disk
	s := []metrics.Sample{{Name: "/gc/heap/objects:objects"}, {Name: "/gc/scan/heap:bytes"},
		{Name: "/cpu/classes/gc/mark/dedicated:cpu-seconds"}, {Name: "/cpu/classes/gc/mark/idle:cpu-seconds"},
		{Name: "/cpu/classes/gc/mark/assist:cpu-seconds"}}
	mark := func() float64 {
		metrics.Read(s)
		return s[2].Value.Float64() + s[3].Value.Float64() + s[4].Value.Float64()
	}
	runtime.GC()
	before := mark()
	objects, scan := s[0].Value.Uint64(), s[1].Value.Uint64()
	b.ResetTimer()
	for b.Loop() {
		runtime.GC()
	}
	b.StopTimer()
	n := float64(*gcMemories)
	b.ReportMetric((mark()-before)*1e3/float64(b.N), "mark-cpu-ms/cycle")
	b.ReportMetric(float64(objects)/n, "objects/memory")
	b.ReportMetric(float64(scan)/n, "scan-bytes/memory")
	runtime.KeepAlive(f)
}
