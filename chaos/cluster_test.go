package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memcluster/memcluster/client"
)

var (
	buildOnce sync.Once
	binDir    string // removed by TestMain
	builtBin  string
	buildErr  error
)

// memnodeBinary builds memnode once per test binary run.
func memnodeBinary() (string, error) {
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "memcluster-chaos-bin-"); buildErr != nil {
			return
		}
		bin := filepath.Join(binDir, "memnode")
		cmd := exec.Command("go", "build", "-o", bin, "../cmd/memnode")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build memnode: %v\n%s", err, out)
			return
		}
		builtBin = bin
	})
	return builtBin, buildErr
}

// node is one memnode process; its addresses and data dir survive restarts.
type node struct {
	id, bin, dir       string
	idx                int // 1-based place in the network
	net                network
	http, raft, gossip string
	boot               []string // flags of the first start only (--bootstrap-expect, --join)
	args               []string // flags of every start
	mu                 sync.Mutex
	cmd                *exec.Cmd
	started            bool
	paused             bool
	clock              time.Duration // --clock-offset of the next start
	logf               *os.File
	client             *client.Client
	gen                int // times its place was recycled after a removal
}

func newNode(nw network, bin, root string, idx int) (*node, error) {
	n := &node{id: fmt.Sprintf("n%d", idx), idx: idx, bin: bin, net: nw}
	n.dir = filepath.Join(root, n.id)
	var err error
	if n.http, n.raft, n.gossip, err = nw.addrs(idx); err != nil {
		return nil, err
	}
	c, err := client.New("http://"+n.http, client.WithTimeout(clientTimeout))
	if err != nil {
		return nil, err
	}
	n.client = c
	return n, os.MkdirAll(n.dir, 0o755)
}

func (n *node) start() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd != nil {
		return nil
	}
	args := []string{"--node-id", n.id, "--data-dir", n.dir, "--http-addr", n.http, "--raft-addr", n.raft,
		"--gossip-addr", n.gossip, "--gossip-profile", "local", "--log-format", "json"}
	args = append(args, n.args...)
	if !n.started {
		args = append(args, n.boot...)
	}
	if n.clock != 0 {
		args = append(args, "--clock-offset", n.clock.String())
	}
	cmd := n.net.command(n.idx, n.bin, args...)
	setPdeathsig(cmd) // an aborted test must not leave nodes running
	if n.logf == nil {
		f, err := os.OpenFile(filepath.Join(n.dir, "..", n.id+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		n.logf = f
	}
	fmt.Fprintf(n.logf, "=== chaos: start %s at %s clock-offset=%v\n", n.id, time.Now().Format(time.RFC3339Nano), n.clock)
	cmd.Stdout, cmd.Stderr = n.logf, n.logf
	if err := cmd.Start(); err != nil {
		return err
	}
	n.cmd, n.paused, n.started = cmd, false, true
	return nil
}

// recycle turns a removed node's place into a spare under a new id with an empty data dir (a removed id
// stays refused for good). Its addresses stay.
func (n *node) recycle(args []string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.logf != nil {
		n.logf.Close()
		n.logf = nil
	}
	n.gen++
	n.id = fmt.Sprintf("n%dg%d", n.idx, n.gen)
	n.dir = filepath.Join(filepath.Dir(n.dir), n.id)
	n.args, n.boot, n.started, n.clock = slices.Clone(args), nil, false, 0
	return os.MkdirAll(n.dir, 0o755)
}

// kill sends SIGKILL (no shutdown path runs) and reaps the process.
func (n *node) kill() {
	n.mu.Lock()
	cmd := n.cmd
	n.cmd, n.paused = nil, false
	n.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_, _ = cmd.Process.Wait()
		if n.logf != nil {
			fmt.Fprintf(n.logf, "=== chaos: SIGKILL %s at %s\n", n.id, time.Now().Format(time.RFC3339Nano))
		}
	}
}

func (n *node) signal(sig syscall.Signal) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil || n.cmd.Process == nil {
		return
	}
	_ = n.cmd.Process.Signal(sig)
	n.paused = sig == syscall.SIGSTOP
}

func (n *node) up() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cmd != nil
}

func (n *node) tail(lines int) string {
	b, _ := os.ReadFile(filepath.Join(n.dir, "..", n.id+".log"))
	ls := strings.Split(string(b), "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return strings.Join(ls, "\n")
}

// testCluster is the nodes of one test: the members (formed, or joined later) and spares not started yet.
type testCluster struct {
	t       *testing.T
	net     network
	root    string
	mu      sync.Mutex
	members []*node
	spares  []*node
	args    []string // flags of every node's every start
}

// newCluster forms a cluster of size nodes (4 shards, 3 replicas) and prepares spare more, every node started
// with args. Cleanup kills every process and removes the data unless the test failed or -chaos.keep is set.
func newCluster(t *testing.T, size, spare int, args []string) *testCluster {
	nw := newNetwork(t)
	bin, err := memnodeBinary()
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.MkdirTemp("", "memcluster-chaos-")
	if err != nil {
		t.Fatal(err)
	}
	c := &testCluster{t: t, net: nw, root: root, args: args}
	// Registered after the network's cleanup, so it runs before it: processes die before their namespaces.
	t.Cleanup(c.close)
	for i := 1; i <= size+spare; i++ {
		n, err := newNode(nw, bin, root, i)
		if err != nil {
			t.Fatal(err)
		}
		n.args = args
		if i <= size {
			c.members = append(c.members, n)
		} else {
			c.spares = append(c.spares, n)
		}
	}
	for _, n := range c.members {
		// The restart path has no --join: a node must rejoin from its data dir.
		n.boot = []string{"--bootstrap-expect", fmt.Sprint(size), "--join", c.members[0].gossip, "--shards", fmt.Sprint(chaosShards), "--replicas", fmt.Sprint(chaosReplicas)}
	}
	t0 := time.Now()
	for _, n := range c.members {
		if err := n.start(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.waitHealthy(90 * time.Second); err != nil {
		c.dumpLogs()
		t.Fatal(err)
	}
	t.Logf("cluster of %d formed on %s in %.1fs (data and logs in %s)", size, nw.name(), time.Since(t0).Seconds(), root)
	return c
}

func (c *testCluster) close() {
	for _, n := range slices.Concat(c.members, c.spares) {
		n.signal(syscall.SIGCONT)
		n.kill()
		if n.logf != nil {
			n.logf.Close()
		}
	}
	if c.t.Failed() || *flagKeep {
		c.t.Logf("data dirs and node logs kept in %s", c.root)
	} else {
		os.RemoveAll(c.root)
	}
}

// nodes returns the current members.
func (c *testCluster) nodes() []*node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.members)
}

// up returns the members whose process runs.
func (c *testCluster) up() []*node {
	var out []*node
	for _, n := range c.nodes() {
		if n.up() {
			out = append(out, n)
		}
	}
	return out
}

func (c *testCluster) dumpLogs() {
	for _, n := range c.nodes() {
		c.t.Logf("--- %s:\n%s", n.id, n.tail(30))
	}
}

// healAll undoes every fault: network rules flushed, every member running and unpaused, the cluster healthy.
func (c *testCluster) healAll(d time.Duration) error {
	if err := c.net.heal(); err != nil {
		return err
	}
	for _, n := range c.nodes() {
		n.signal(syscall.SIGCONT)
		if err := n.start(); err != nil {
			return err
		}
	}
	if err := c.waitHealthy(d); err != nil {
		c.dumpLogs()
		return err
	}
	return nil
}

// healthy: every member answers and sees a healthy cluster of exactly the members, all alive (members removed
// for good are listed as removed and not counted), with no replica move under way.
func (c *testCluster) healthy() bool {
	ms := c.nodes()
	for _, n := range ms {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		st, err := n.client.ClusterStatus(ctx)
		cancel()
		if err != nil || !st.Healthy || len(st.Moves) > 0 {
			return false
		}
		counted := 0
		for _, ns := range st.Nodes {
			if ns.State == "removed" {
				continue
			}
			if ns.State != "alive" {
				return false
			}
			counted++
		}
		if counted != len(ms) {
			return false
		}
	}
	return true
}

func (c *testCluster) waitHealthy(d time.Duration) error {
	deadline := time.Now().Add(d)
	for !c.healthy() {
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster not healthy after %v", d)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}
