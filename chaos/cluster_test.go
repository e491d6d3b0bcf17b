package chaos

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/memcluster/memcluster/client"
)

// buildBinaries builds memnode into dir.
func buildBinaries(dir string) (string, error) {
	bin := filepath.Join(dir, "memnode")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/memnode")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build memnode: %v\n%s", err, out)
	}
	return bin, nil
}

// freeAddr picks a free loopback port (listen on :0, then close).
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// node is one memnode process; its addresses and data dir survive restarts.
type node struct {
	id, bin, dir       string
	http, raft, gossip string
	extra              []string
	mu                 sync.Mutex
	cmd                *exec.Cmd
	paused             bool
	logf               *os.File
	client             *client.Client
}

func newNode(bin, root, id string) (*node, error) {
	n := &node{id: id, bin: bin, dir: filepath.Join(root, id)}
	for _, p := range []*string{&n.http, &n.raft, &n.gossip} {
		a, err := freeAddr()
		if err != nil {
			return nil, err
		}
		*p = a
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
	args := append([]string{"--node-id", n.id, "--data-dir", n.dir, "--http-addr", n.http, "--raft-addr", n.raft,
		"--gossip-addr", n.gossip, "--gossip-profile", "local", "--log-format", "json"}, n.extra...)
	cmd := exec.Command(n.bin, args...)
	if n.logf == nil {
		f, err := os.OpenFile(filepath.Join(n.dir, "..", n.id+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		n.logf = f
	}
	fmt.Fprintf(n.logf, "=== chaos: start %s at %s\n", n.id, time.Now().Format(time.RFC3339Nano))
	cmd.Stdout, cmd.Stderr = n.logf, n.logf
	if err := cmd.Start(); err != nil {
		return err
	}
	n.cmd, n.paused = cmd, false
	return nil
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

// healthy: every node answers and sees a healthy cluster of len(nodes) members.
func healthy(nodes []*node) bool {
	for _, n := range nodes {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		st, err := n.client.ClusterStatus(ctx)
		cancel()
		if err != nil || !st.Healthy || len(st.Nodes) != len(nodes) {
			return false
		}
	}
	return true
}

func waitHealthy(nodes []*node, d time.Duration) error {
	deadline := time.Now().Add(d)
	for !healthy(nodes) {
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster not healthy after %v", d)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}
