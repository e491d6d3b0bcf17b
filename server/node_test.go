package server

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/memcluster/memcluster/cluster"
	"github.com/memcluster/memcluster/embed"
	"github.com/memcluster/memcluster/internal/nodeindex"
	"github.com/memcluster/memcluster/internal/testport"
	"github.com/memcluster/memcluster/storage"
)

// testNode is one real node in process: Pebble, bleve and vector indexes, raft over TCP on loopback with one
// shard of one replica, and this package's API in front of it (called through its http.Handler).
type testNode struct {
	api  *Server
	node *cluster.Node
	db   *storage.DB
}

const (
	tokBobWriter = "bob-writer-0123456789abcdef"
	tokBobReader = "bob-reader-0123456789abcdef"
	tokAdmin     = "admin-token-0123456789abcdef"
	tokCluster   = "cluster-secret-0123456789abcdef"
)

// testAuth binds bob's tokens to the user "bob" and the users under "bob/".
func testAuth(t testing.TB) *Auth {
	a, err := NewAuth([]TokenEntry{
		{Token: tokBobWriter, Role: "writer", Users: []string{"bob", "bob/*"}},
		{Token: tokBobReader, Role: "reader", Users: []string{"bob", "bob/*"}},
		{Token: tokAdmin, Role: "admin"},
	}, tokCluster)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func loopbackAddr(t testing.TB) string {
	return testport.MustAddr(t)
}

// startTestNode starts a node with opts (Auth, Pprof...) and waits until its shard has a leader.
func startTestNode(t testing.TB, opts Options) *testNode {
	t.Helper()
	dir := t.TempDir()
	log := slog.New(slog.DiscardHandler)
	db, err := storage.Open(filepath.Join(dir, "db"), storage.Options{Logger: log, CacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embed.NewHashed(embed.HashedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node, err := cluster.New(cluster.Config{NodeID: "n1", DataDir: dir, RaftAddr: loopbackAddr(t),
		GossipAddr: loopbackAddr(t), HTTPAddr: loopbackAddr(t), BootstrapExpect: 1, Shards: 1, Replicas: 1,
		GossipProfile: "local", Logger: log}, db, nodeindex.Factory(dir, db, emb, nodeindex.Meters{}, nil, log))
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Stop(); _ = db.Close() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		if ok, _ := node.Ready(); ok {
			if _, err := node.ShardUsers(context.Background(), 0, false); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the node's shard elected no leader within 30s")
		}
		time.Sleep(20 * time.Millisecond) // polling a condition, not waiting for time to pass
	}
	opts.Logger = log
	return &testNode{api: New(node, emb, opts), node: node, db: db}
}
