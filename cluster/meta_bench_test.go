package cluster

import (
	"fmt"
	"log/slog"
	"testing"
)

// BenchmarkMetaRoute routes a user as a request does, through a copy of the meta state (clone) or in place
// (read): 16 shards of 3 replicas on 3 nodes.
func BenchmarkMetaRoute(b *testing.B) {
	f := newMetaFSM(slog.New(slog.DiscardHandler), nil)
	f.state.Shards, f.state.Replicas = 16, 3
	for i := range 3 {
		id := fmt.Sprintf("n%d", i+1)
		f.state.Nodes[id] = NodeInfo{ID: id, HTTPAddr: fmt.Sprintf("127.0.0.1:%d", 7480+10*i)}
	}
	for range 16 {
		f.state.Placement = append(f.state.Placement, []string{"n1", "n2", "n3"})
	}
	if err := f.state.normalize(); err != nil {
		b.Fatal(err)
	}
	b.Run("clone", func(b *testing.B) {
		for i := range b.N {
			st := f.State()
			_ = st.Route(fmt.Sprint(i % 1000))
		}
	})
	b.Run("read", func(b *testing.B) {
		for i := range b.N {
			f.read(func(s *MetaState) { _ = s.Route(fmt.Sprint(i % 1000)) })
		}
	})
}
