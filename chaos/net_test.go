package chaos

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/memcluster/memcluster/internal/testport"
)

var flagNet = flag.String("chaos.net", "auto", "where nodes run: netns (one network namespace per node; partition faults), "+
	"loopback (127.0.0.1, no partitions), or auto (netns when it can be set up, else loopback; CI=true demands netns)")

// errNoPartitions: the loopback network cannot cut links.
var errNoPartitions = errors.New("loopback network: partitions need -chaos.net=netns")

// network places memnode processes — where each listens and how it is started — and, with namespaces, cuts the
// links between them. Node indexes are 1-based and stable for a run.
type network interface {
	name() string
	// addrs returns node i's HTTP, Raft and gossip addresses, setting up its place in the network on first use.
	addrs(i int) (http, raft, gossip string, err error)
	// command runs bin with args inside node i's network.
	command(i int, bin string, args ...string) *exec.Cmd
	// partitions reports whether block works.
	partitions() bool
	// block drops packets between node a and node b from a's side: out drops what a sends to b, !out what a
	// receives from b. It lasts until heal.
	block(a, b int, out bool) error
	// heal removes every block.
	heal() error
	close() error
}

// loopback is the original setup: every node on 127.0.0.1 with free ports; no partitions.
type loopback struct{}

func (loopback) name() string     { return "loopback" }
func (loopback) partitions() bool { return false }
func (loopback) heal() error      { return nil }
func (loopback) close() error     { return nil }

func (loopback) block(int, int, bool) error { return errNoPartitions }

func (loopback) addrs(int) (string, string, string, error) {
	var a [3]string
	for i := range a {
		s, err := freeAddr()
		if err != nil {
			return "", "", "", err
		}
		a[i] = s
	}
	return a[0], a[1], a[2], nil
}

func (loopback) command(_ int, bin string, args ...string) *exec.Cmd {
	return exec.Command(bin, args...)
}

// freeAddr picks a free loopback port outside the kernel's ephemeral range (see testport).
func freeAddr() (string, error) { return testport.Addr() }

// newNetwork picks the network for a test from -chaos.net. Namespaces that cannot be set up skip the test
// (fail it when CI=true) if they were asked for, and fall back to loopback under auto (fail when CI=true: CI
// must exercise partitions).
func newNetwork(t *testing.T) network {
	ci := os.Getenv("CI") == "true"
	switch *flagNet {
	case "loopback":
		return loopback{}
	case "netns", "auto":
	default:
		t.Fatalf("-chaos.net=%q: want netns, loopback or auto", *flagNet)
	}
	n, err := newNetns(t.Logf)
	if err == nil {
		t.Cleanup(func() {
			if err := n.close(); err != nil {
				t.Errorf("remove network namespaces: %v", err)
			}
		})
		return n
	}
	msg := fmt.Sprintf("network namespaces unavailable (%v); they need root and iproute2+iptables", err)
	switch {
	case ci:
		t.Fatalf("%s; CI=true requires them", msg)
	case *flagNet == "netns":
		t.Skipf("%s; run with -chaos.net=loopback to test without partitions", msg)
	}
	t.Logf("%s: running on loopback WITHOUT partition faults (-chaos.net=loopback silences this)", msg)
	return loopback{}
}
