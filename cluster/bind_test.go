package cluster

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// A node in a container listens on every interface (BindHost 0.0.0.0) and advertises a name its peers resolve
// (the service name); here the name is localhost. The cluster forms, the advertised addresses are the names, and
// the Raft port listens on the bind host.
func TestBindHostListensThereAndAdvertisesNames(t *testing.T) {
	c := newTestCluster(t, testConfig())
	named := func() string {
		_, port, _ := net.SplitHostPort(freeAddr(t))
		return "localhost:" + port
	}
	for i := 0; i < 3; i++ {
		cfg := testConfig()
		cfg.NodeID, cfg.BootstrapExpect, cfg.BindHost = fmt.Sprintf("n%d", i+1), 3, "0.0.0.0"
		cfg.DataDir = t.TempDir()
		cfg.RaftAddr, cfg.GossipAddr, cfg.HTTPAddr = named(), named(), named()
		if i > 0 {
			cfg.Join = []string{c.nodes[0].cfg.GossipAddr} // a name, as --join n1:7482
		}
		tn := &testNode{cfg: cfg, dir: cfg.DataDir}
		t.Cleanup(tn.stop) // after its TempDir's, so it runs before the dir is removed
		c.start(tn)
		c.nodes = append(c.nodes, tn)
	}
	c.waitHealthy(c.nodes[0], 40*time.Second, "a healthy cluster of named nodes")
	if _, err := c.put(c.nodes[2], "bind-user", "written through a named node"); err != nil {
		t.Fatal(err)
	}

	st := c.nodes[1].Status(ctxFor(t, 30*time.Second))
	for _, ns := range st.Nodes {
		if !strings.HasPrefix(ns.RaftAddr, "localhost:") || !strings.HasPrefix(ns.HTTPAddr, "localhost:") {
			t.Errorf("node %s advertises raft %q, http %q; want the names it was given", ns.ID, ns.RaftAddr, ns.HTTPAddr)
		}
		// Gossip advertises the name's address (memberlist carries IPs).
		if !strings.HasPrefix(ns.GossipAddr, "127.0.0.1:") {
			t.Errorf("node %s gossips from %q, want localhost's IPv4 address", ns.ID, ns.GossipAddr)
		}
	}
	for _, tn := range c.nodes {
		if ip := tn.mux.ln.Addr().(*net.TCPAddr).IP; !ip.IsUnspecified() {
			t.Errorf("node %s: raft listens on %v, want the bind host 0.0.0.0", tn.ID(), ip)
		}
	}
}

func TestBindHostMustBeAnIP(t *testing.T) {
	cfg := testConfig().withDefaults()
	cfg.NodeID, cfg.DataDir, cfg.BindHost = "n1", t.TempDir(), "n1"
	err := cfg.Validate()
	if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), "bind-host") {
		t.Fatalf("BindHost %q: got %v, want a bind-host configuration error", cfg.BindHost, err)
	}
	if got := ListenAddr("0.0.0.0", "n1:7481"); got != "0.0.0.0:7481" {
		t.Fatalf("ListenAddr: got %q", got)
	}
	if got := ListenAddr("", "n1:7481"); got != "n1:7481" {
		t.Fatalf("ListenAddr without a bind host: got %q", got)
	}
}
