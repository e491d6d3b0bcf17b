package chaos

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// One run's network: a hub namespace holding a bridge, one namespace per node with a veth into the bridge
// (10.77.<run>.<i>/24), and an uplink veth whose root-namespace end (mcc<run>, 10.77.<run>.254) lets the test
// process reach every node. The bridge lives in the hub, not in the root namespace, so the host's firewall
// (Docker's FORWARD DROP with br_netfilter, for one) never sees the nodes' traffic and is never touched.
// Faults are iptables rules inside a node's own namespace, so they drop exactly that node's packets.
//
// Names carry the test process's pid — memchaos-<pid>-<run>-<hub|nI> — and the uplink's alias is
// memchaos-<pid>, so parallel runs do not collide and a later run can tell an aborted run's leftovers (pid no
// longer a chaos test) from a live run's.
const (
	nsPrefix   = "memchaos-"
	uplinkPref = "mcc"
	portHTTP   = 7480
	portRaft   = 7481
	portGossip = 7482
)

// errLinkExists: another run owns the uplink name, so it owns that subnet too.
var errLinkExists = errors.New("uplink exists")

type netns struct {
	logf      func(string, ...any)
	pid, run  int
	hub, host string
	mu        sync.Mutex
	nodes     map[int]string // node index -> namespace
	blocked   map[int]bool   // nodes with rules to flush
}

func newNetns(logf func(string, ...any)) (*netns, error) {
	for _, tool := range []string{"ip", "iptables"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s not found: %w", tool, err)
		}
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("not root")
	}
	removeStale(logf)
	used := usedRuns()
	n := &netns{logf: logf, pid: os.Getpid(), nodes: map[int]string{}, blocked: map[int]bool{}}
	for k := 0; k < 250; k++ {
		run := 1 + (n.pid+k)%250
		if used[run] {
			continue
		}
		err := n.setupHub(run)
		if err == nil {
			logf("network: namespaces %s… on 10.77.%d.0/24 (uplink %s)", n.nsName(""), run, n.host)
			return n, nil
		}
		_ = n.close()
		if !errors.Is(err, errLinkExists) {
			return nil, err
		}
	}
	return nil, errors.New("no free 10.77.x.0/24 subnet")
}

func (n *netns) name() string     { return "netns" }
func (n *netns) partitions() bool { return true }

func (n *netns) nsName(suffix string) string {
	return fmt.Sprintf("%s%d-%d-%s", nsPrefix, n.pid, n.run, suffix)
}

func (n *netns) ip(i int) string { return fmt.Sprintf("10.77.%d.%d", n.run, i) }

func (n *netns) setupHub(run int) error {
	n.run, n.hub, n.host = run, "", fmt.Sprintf("%s%d", uplinkPref, run)
	hub := n.nsName("hub")
	if err := sh("ip", "netns", "add", hub); err != nil {
		return err
	}
	n.hub = hub
	err := sh("ip", "-n", hub, "link", "add", "up0", "type", "veth", "peer", "name", n.host, "netns", strconv.Itoa(n.pid))
	if err != nil && strings.Contains(err.Error(), "File exists") {
		n.host = "" // not ours: close must not delete it
		return errLinkExists
	}
	return shAll(err,
		[]string{"ip", "-n", hub, "link", "set", "lo", "up"},
		[]string{"ip", "-n", hub, "link", "add", "br0", "type", "bridge"},
		[]string{"ip", "-n", hub, "link", "set", "br0", "up"},
		[]string{"ip", "-n", hub, "link", "set", "up0", "master", "br0", "up"},
		[]string{"ip", "link", "set", n.host, "alias", fmt.Sprintf("%s%d", nsPrefix, n.pid)},
		[]string{"ip", "addr", "add", n.ip(254) + "/24", "dev", n.host},
		[]string{"ip", "link", "set", n.host, "up"})
}

// addNode creates node i's namespace and plugs it into the bridge.
func (n *netns) addNode(i int) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if ns, ok := n.nodes[i]; ok {
		return ns, nil
	}
	ns := n.nsName(fmt.Sprintf("n%d", i))
	if err := sh("ip", "netns", "add", ns); err != nil {
		return "", err
	}
	n.nodes[i] = ns
	veth := fmt.Sprintf("v%d", i)
	return ns, shAll(nil,
		[]string{"ip", "-n", ns, "link", "set", "lo", "up"},
		[]string{"ip", "-n", n.hub, "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns},
		[]string{"ip", "-n", n.hub, "link", "set", veth, "master", "br0", "up"},
		[]string{"ip", "-n", ns, "addr", "add", n.ip(i) + "/24", "dev", "eth0"},
		[]string{"ip", "-n", ns, "link", "set", "eth0", "up"})
}

func (n *netns) addrs(i int) (string, string, string, error) {
	if _, err := n.addNode(i); err != nil {
		return "", "", "", fmt.Errorf("namespace of node %d: %w", i, err)
	}
	a := func(p int) string { return fmt.Sprintf("%s:%d", n.ip(i), p) }
	return a(portHTTP), a(portRaft), a(portGossip), nil
}

// command: `ip netns exec` execs the program itself, so the pid is memnode's and signals reach it directly.
func (n *netns) command(i int, bin string, args ...string) *exec.Cmd {
	n.mu.Lock()
	ns := n.nodes[i]
	n.mu.Unlock()
	return exec.Command("ip", append([]string{"netns", "exec", ns, bin}, args...)...)
}

func (n *netns) block(a, b int, out bool) error {
	n.mu.Lock()
	ns := n.nodes[a]
	n.blocked[a] = true
	n.mu.Unlock()
	rule := []string{"-A", "INPUT", "-s", n.ip(b)}
	if out {
		rule = []string{"-A", "OUTPUT", "-d", n.ip(b)}
	}
	return sh("ip", append([]string{"netns", "exec", ns, "iptables", "-w"}, append(rule, "-j", "DROP")...)...)
}

func (n *netns) heal() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	var errs []error
	for i := range n.blocked {
		for _, chain := range []string{"INPUT", "OUTPUT"} {
			errs = append(errs, sh("ip", "netns", "exec", n.nodes[i], "iptables", "-w", "-F", chain))
		}
	}
	clear(n.blocked)
	return errors.Join(errs...)
}

// close removes the uplink and every namespace (which takes the veths, the bridge and the rules with it). The
// nodes are killed before; anything still inside is one of this run's memnodes.
func (n *netns) close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	var errs []error
	if n.host != "" && linkExists(n.host) {
		errs = append(errs, sh("ip", "link", "del", n.host))
	}
	for _, ns := range n.nodes {
		errs = append(errs, removeNamespace(ns))
	}
	clear(n.nodes)
	if n.hub != "" {
		errs = append(errs, removeNamespace(n.hub))
		n.hub = ""
	}
	return errors.Join(errs...)
}

func removeNamespace(ns string) error {
	out, _ := exec.Command("ip", "netns", "pids", ns).Output()
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return sh("ip", "netns", "del", ns)
}

// removeStale deletes namespaces and uplinks left by chaos runs that are gone (aborted, or killed by a test
// timeout before their cleanup ran), with any memnode still running inside.
func removeStale(logf func(string, ...any)) {
	var nss []struct{ Name string }
	if out, err := exec.Command("ip", "-j", "netns", "list").Output(); err == nil && len(out) > 0 {
		_ = json.Unmarshal(out, &nss)
	}
	for _, ns := range nss {
		if pid, ok := ownerPid(ns.Name); ok && !chaosAlive(pid) {
			logf("network: removing stale namespace %s", ns.Name)
			_ = removeNamespace(ns.Name)
		}
	}
	var links []struct {
		Ifname  string `json:"ifname"`
		Ifalias string `json:"ifalias"`
	}
	if out, err := exec.Command("ip", "-j", "link", "show").Output(); err == nil {
		_ = json.Unmarshal(out, &links)
	}
	for _, l := range links {
		if pid, ok := ownerPid(l.Ifalias); ok && strings.HasPrefix(l.Ifname, uplinkPref) && !chaosAlive(pid) {
			logf("network: removing stale uplink %s", l.Ifname)
			_ = sh("ip", "link", "del", l.Ifname)
		}
	}
}

// ownerPid parses the pid out of memchaos-<pid>[-…].
func ownerPid(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, nsPrefix)
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
	return pid, err == nil
}

// chaosAlive: pid is this process or another running chaos test binary (a reused pid is anything else).
func chaosAlive(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return err == nil && strings.HasPrefix(strings.TrimSpace(string(comm)), "chaos.test")
}

// usedRuns lists the third octets of 10.77.x.0/24 subnets already on the host.
func usedRuns() map[int]bool {
	used := map[int]bool{}
	var ifs []struct {
		Ifname   string `json:"ifname"`
		AddrInfo []struct {
			Local string `json:"local"`
		} `json:"addr_info"`
	}
	if out, err := exec.Command("ip", "-j", "-4", "addr", "show").Output(); err == nil {
		_ = json.Unmarshal(out, &ifs)
	}
	for _, i := range ifs {
		if r, err := strconv.Atoi(strings.TrimPrefix(i.Ifname, uplinkPref)); err == nil {
			used[r] = true
		}
		for _, a := range i.AddrInfo {
			if p := strings.Split(a.Local, "."); len(p) == 4 && p[0] == "10" && p[1] == "77" {
				if r, err := strconv.Atoi(p[2]); err == nil {
					used[r] = true
				}
			}
		}
	}
	return used
}

func linkExists(name string) bool { return exec.Command("ip", "link", "show", name).Run() == nil }

// sh runs one command; its error carries the command and its output.
func sh(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// shAll runs commands in order until one fails; prior is an earlier step's error.
func shAll(prior error, cmds ...[]string) error {
	if prior != nil {
		return prior
	}
	for _, c := range cmds {
		if err := sh(c[0], c[1:]...); err != nil {
			return err
		}
	}
	return nil
}
