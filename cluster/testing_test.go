package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/memcluster/memcluster/fulltext"
	"github.com/memcluster/memcluster/internal/testport"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/retrieval"
	"github.com/memcluster/memcluster/storage"
	"github.com/memcluster/memcluster/vector"
)

// testNode is one in-process node: a real Pebble DB in a temp dir, real raft over TCP on 127.0.0.1, real
// memberlist gossip, and the internal HTTP API on a loopback port.
type testNode struct {
	*Node
	cfg  Config
	db   *storage.DB
	http *http.Server
	dir  string
	// disk is the node's filesystem: the real one, whose free space a test can report as none.
	disk *fullableFS
	// oldBuild makes the node's report look like a build's before CmdPrune (no max_command).
	oldBuild atomic.Bool
	// holdProposals, when positive, is how long the node's internal API holds each forwarded proposal first.
	holdProposals atomic.Int64
	// indexGate, when set, holds every index open of the node until it is closed; indexErr fails every open.
	indexGate chan struct{}
	indexErr  error
}

// fullableFS is the OS filesystem, except that it reports no free space while full is set.
type fullableFS struct {
	vfs.FS
	full atomic.Bool
}

func (f *fullableFS) GetDiskUsage(path string) (vfs.DiskUsage, error) {
	u, err := f.FS.GetDiskUsage(path)
	if f.full.Load() {
		u.AvailBytes = 0
	}
	return u, err
}

type testCluster struct {
	t     *testing.T
	nodes []*testNode
	base  Config
	logs  *logTail
	bg    []func() // stops of the background workers
	// storage, when set, adjusts the storage options of every node the cluster starts from then on.
	storage func(*storage.Options)
}

// testHangAfter is how long a cluster test may run, its cleanups included, before the watchdog calls it stuck: far
// past its longest wait (the slowest takes under a minute under -race on two cores).
const testHangAfter = 8 * time.Minute

// watchdog starts the cluster's log tail, shown when the test fails, and a watchdog that ends the test binary when
// the test is still running after testHangAfter, first printing the test's name, every goroutine and the
// cluster's last log lines: go test's own -timeout comes much later and shows no log. Registered by
// newTestCluster, before any node's cleanup, both cover the nodes' stops too.
func (c *testCluster) watchdog() {
	name, logs := c.t.Name(), &logTail{}
	c.logs = logs
	c.t.Cleanup(func() {
		if c.t.Failed() {
			c.t.Logf("last %d log lines of the cluster:\n%s", logTailLines, logs)
		}
	})
	watch := time.AfterFunc(testHangAfter, func() {
		fmt.Fprintf(os.Stderr, "\nHUNG: %s still running after %v; its goroutines, then its cluster's last log lines:\n",
			name, testHangAfter)
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 2)
		fmt.Fprintf(os.Stderr, "\n%s\nHUNG: %s still running after %v\n", logs.String(), name, testHangAfter)
		os.Exit(3)
	})
	c.t.Cleanup(func() { watch.Stop() })
}

// freeAddr is a loopback address outside the kernel's ephemeral range (see testport).
func freeAddr(t *testing.T) string {
	t.Helper()
	return testport.MustAddr(t)
}

// testConfig is tuned for one host: fast elections and failure detection.
func testConfig() Config {
	// Fast, but not so fast that a CI machine's scheduling hiccups make leaders flap: a leader that cannot reach a
	// quorum within the lease steps down, and a two-core runner can stall a goroutine for a few hundred ms.
	return Config{Shards: 4, Replicas: 3, GossipProfile: "local", HeartbeatTimeout: 500 * time.Millisecond,
		ElectionTimeout: 500 * time.Millisecond, LeaderLeaseTimeout: 300 * time.Millisecond,
		ReconcileInterval: 100 * time.Millisecond, DeadNodeTimeout: 3 * time.Second}
}

// newTestCluster is an empty cluster whose watchdog and log tail run from now on, before any node's cleanup.
func newTestCluster(t *testing.T, base Config) *testCluster {
	c := &testCluster{t: t, base: base}
	c.watchdog()
	return c
}

func makeCluster(t *testing.T, n int, base Config) *testCluster {
	t.Helper()
	c := newTestCluster(t, base)
	c.addNodes(n)
	return c
}

// addNodes starts n nodes, n1 to nN, that bootstrap the cluster together.
func (c *testCluster) addNodes(n int) {
	c.t.Helper()
	for i := 0; i < n; i++ {
		cfg := c.base
		cfg.NodeID = fmt.Sprintf("n%d", i+1)
		cfg.BootstrapExpect = n
		c.add(cfg)
	}
}

// add starts a node with cfg; NodeID is required, addresses and dir are filled in.
func (c *testCluster) add(cfg Config) *testNode {
	c.t.Helper()
	cfg.DataDir = c.t.TempDir()
	cfg.RaftAddr, cfg.GossipAddr, cfg.HTTPAddr = freeAddr(c.t), freeAddr(c.t), freeAddr(c.t)
	if len(cfg.Join) == 0 && len(c.nodes) > 0 {
		cfg.Join = []string{c.nodes[0].cfg.GossipAddr}
	}
	tn := &testNode{cfg: cfg, dir: cfg.DataDir}
	// Registered after the node's TempDir, so it runs before the dir is removed (cleanups run last in, first
	// out): a node that joined after the cluster's own cleanup was registered would otherwise still run raft
	// on a removed dir. Background writers stop first, so none calls into a stopped node.
	c.t.Cleanup(func() {
		for _, stop := range c.bg {
			stop()
		}
		tn.stop()
	})
	c.start(tn)
	c.nodes = append(c.nodes, tn)
	return tn
}

func (c *testCluster) start(tn *testNode) {
	c.t.Helper()
	tn.cfg.Logger = c.logger(tn.cfg.NodeID)
	if tn.disk == nil {
		tn.disk = &fullableFS{FS: vfs.Default}
	}
	opts := storage.Options{Logger: tn.cfg.Logger, FS: tn.disk, DiskCheckInterval: -1}
	if c.storage != nil {
		c.storage(&opts)
	}
	db, err := storage.Open(filepath.Join(tn.dir, "pebble"), opts)
	if err != nil {
		c.t.Fatal(err)
	}
	tn.db = db
	factory := testIndexFactory(tn.dir, db, tn.cfg.Logger)
	if gate, fail := tn.indexGate, tn.indexErr; gate != nil || fail != nil {
		open := factory
		factory = func(shard uint32) (ShardIndex, error) {
			if gate != nil {
				<-gate
			}
			if fail != nil {
				return nil, fail
			}
			return open(shard)
		}
	}
	n, err := New(tn.cfg, db, factory)
	if err != nil {
		c.t.Fatal(err)
	}
	tn.Node = n
	ln, err := net.Listen("tcp", tn.cfg.HTTPAddr)
	if err != nil {
		c.t.Fatal(err)
	}
	internal := n.InternalHandler()
	tn.http = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d := time.Duration(tn.holdProposals.Load()); d > 0 && strings.HasSuffix(r.URL.Path, "/propose") {
			time.Sleep(d)
		}
		if tn.oldBuild.Load() && r.Method == http.MethodGet && r.URL.Path == internalPrefix+"node" {
			rep := n.Report()
			rep.MaxCommand = 0
			writeJSON(w, http.StatusOK, rep)
			return
		}
		internal.ServeHTTP(w, r)
	})}
	go tn.http.Serve(ln)
	if err := n.Start(); err != nil {
		c.t.Fatal(err)
	}
}

func (tn *testNode) stop() {
	if tn.Node == nil {
		return
	}
	tn.http.Close()
	_ = tn.Node.Stop()
	tn.db.Close()
	tn.Node = nil
}

// restart brings a stopped node back on the same data dir and addresses.
func (c *testCluster) restart(tn *testNode) {
	c.t.Helper()
	tn.cfg.Join = nil // it must rejoin from what it remembers
	c.start(tn)
}

const testDim = 8

// testIndexFactory opens bleve as memnode does (NoSync: a crash loses a suffix that the next open re-feeds).
func testIndexFactory(dir string, db *storage.DB, log *slog.Logger) IndexFactory {
	return func(shard uint32) (ShardIndex, error) {
		ft, err := fulltext.Open(filepath.Join(dir, "index", fmt.Sprint(shard)), fulltext.Options{NoSync: true})
		if err != nil {
			return nil, err
		}
		return retrieval.OpenShardIndex(shard, db, vector.New(testDim), ft, "test-model", log)
	}
}

// ctxFor is a context that ends after d, or with the test: no call a test makes waits for good, and a stuck one
// fails naming itself rather than hanging the package until go test's timeout.
func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// healthy reports whether every shard has a leader and its full replica set, as node tn sees it.
func (c *testCluster) healthy(tn *testNode) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st := tn.Status(ctx)
	if !st.Healthy {
		b, _ := json.Marshal(st)
		c.logs.lastStatus.Store(string(b))
	}
	return st.Healthy
}

// waitHealthy waits until tn sees a healthy cluster; on timeout the failure shows the last status it saw.
func (c *testCluster) waitHealthy(tn *testNode, d time.Duration, what string) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for !c.healthy(tn) {
		if time.Now().After(deadline) {
			st, _ := c.logs.lastStatus.Load().(string)
			c.t.Fatalf("timed out after %v waiting for %s; last status: %s", d, what, st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var idSource = memory.NewIDSource()

func putCmd(t *testing.T, user, text string) ([]byte, string) {
	t.Helper()
	return putCmdAs(t, storage.RecordF32, user, text)
}

// putCmdAs is putCmd with its record in format f.
func putCmdAs(t *testing.T, f storage.RecordFormat, user, text string) ([]byte, string) {
	t.Helper()
	now := time.Now().UTC()
	id := idSource.New(now)
	vec := make([]float32, testDim)
	vec[len(text)%testDim] = 1
	b, err := storage.Encoder{Records: f}.Put([]memory.Memory{{ID: id, UserID: user, Type: memory.Episodic, Text: text,
		OccurredAt: now, CreatedAt: now, Embedding: vec, EmbedModel: "test-model", Importance: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	return b, id
}

// put writes one memory through node tn, which routes it to the shard leader, in the record format tn writes.
func (c *testCluster) put(tn *testNode, user, text string) (string, error) {
	cmd, id := putCmdAs(c.t, tn.RecordFormat(), user, text)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	shard, err := tn.ShardFor(ctx, user)
	if err != nil {
		return "", err
	}
	_, err = tn.Propose(ctx, shard, cmd)
	return id, err
}

func (c *testCluster) get(tn *testNode, user, id string, stale bool) (memory.Memory, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	shard, err := tn.ShardFor(ctx, user)
	if err != nil {
		return memory.Memory{}, err
	}
	return tn.Get(ctx, shard, user, id, stale)
}

// background runs work in goroutines until the returned stop is called, and stops them (waiting) when the
// test ends too — registered after the cluster, this cleanup runs before the nodes stop, so a test that fails
// midway never leaves writers calling into a stopped node.
func (c *testCluster) background(workers int, work func(w int, stop <-chan struct{})) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { work(w, done) })
	}
	var once sync.Once
	stop = func() { once.Do(func() { close(done); wg.Wait() }) }
	c.bg = append(c.bg, stop)
	c.t.Cleanup(stop)
	return stop
}
