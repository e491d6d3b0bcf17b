package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

type faultKind string

// The nemesis's faults. Each is healed before the next starts, so at most one is active at a time.
const (
	kindKill    faultKind = "kill"    // SIGKILL a node, restart it after hold
	kindPause   faultKind = "pause"   // SIGSTOP a node, SIGCONT after hold
	kindIsolate faultKind = "isolate" // cut one node from every peer (clients still reach it)
	kindSplit   faultKind = "split"   // cut a minority from the majority
	kindOneway  faultKind = "oneway"  // drop what node sends to peer; the other direction still flows
	kindClock   faultKind = "clock"   // restart a node with another --clock-offset: a wall-clock step
	kindDead    faultKind = "dead"    // SIGKILL a node past --dead-node-timeout so its replicas are re-placed
	kindJoin    faultKind = "join"    // start a spare node that joins; rebalancing moves replicas onto it
	// Operator actions, run while the other faults come and go.
	kindTransfer faultKind = "transfer" // move a shard's leadership to a chosen replica
	kindDrain    faultKind = "drain"    // drain a node (with more members than replicas), then undrain it
	kindRemove   faultKind = "remove"   // drain a node, remove it for good and stop its process
	kindReshard  faultKind = "reshard"  // split a shard online and SIGKILL a node while it splits
)

// kinds lists every fault kind in a fixed order (for dealing and printing).
var kinds = []faultKind{kindKill, kindPause, kindIsolate, kindSplit, kindOneway, kindClock, kindDead, kindJoin,
	kindTransfer, kindDrain, kindRemove, kindReshard}

// chaosShards and chaosReplicas are the layout newCluster forms.
const chaosShards, chaosReplicas = 4, 3

func (k faultKind) needsPartitions() bool {
	return k == kindIsolate || k == kindSplit || k == kindOneway
}

// fault is one step of the nemesis. Node numbers are indexes into the members at that step.
type fault struct {
	at       time.Duration // offset from the schedule's start
	kind     faultKind
	node     int
	peer     int           // oneway: the node that stops hearing from node
	minority []int         // split
	offset   time.Duration // clock: the node's new --clock-offset
	hold     time.Duration // how long the fault lasts
	shard    int           // transfer: the shard whose leadership moves to peer; reshard: the shard split
	after    time.Duration // quiet time after healing
}

func (f fault) String() string {
	switch f.kind {
	case kindSplit:
		return fmt.Sprintf("split minority %v for %v", f.minority, f.hold)
	case kindOneway:
		return fmt.Sprintf("oneway %d->%d for %v", f.node, f.peer, f.hold)
	case kindClock:
		return fmt.Sprintf("clock node %d offset %v", f.node, f.offset)
	case kindTransfer:
		return fmt.Sprintf("transfer shard %d to node %d", f.shard, f.peer)
	case kindReshard:
		return fmt.Sprintf("split shard %d, SIGKILL node %d for %v meanwhile", f.shard, f.node, f.hold)
	}
	return fmt.Sprintf("%s node %d for %v", f.kind, f.node, f.hold)
}

// planSpec is everything a plan depends on: the same spec gives the same faults.
type planSpec struct {
	seed        uint64
	members     int           // cluster size at the start of the schedule
	spares      int           // nodes that may join
	partitions  bool          // the network can cut links
	d           time.Duration // schedule length
	deadTimeout time.Duration // the nodes' --dead-node-timeout
}

// plan derives the nemesis schedule from the spec alone, so a seed replays the same faults. Kinds are dealt
// from shuffled decks — every kind once per deck — so even a short schedule sees most of them. A join is
// followed by a dead fault of an older member, so its replicas are repaired onto a cluster that is also
// rebalancing onto the newcomer, then by a split with a node killed meanwhile, a drain and a removal (which
// need more members than replicas): the removed node comes back as a spare under a new id, so every schedule
// with a spare runs the episode.
func plan(p planSpec) []fault {
	r := rand.New(rand.NewPCG(p.seed, 0x6368616f73))
	ms := func(lo, span int) time.Duration { return time.Duration(lo+r.IntN(span)) * time.Millisecond }
	// A cut that outlasted the failure detector and --dead-node-timeout would have the cut node declared dead
	// and removed from its groups: that is the dead fault's episode, dealt on its own. A cut ends a second
	// before the timeout, however loaded the machine (partition takes its gossip view within the hold).
	cut := func() time.Duration { return max(min(ms(1000, 4000), p.deadTimeout-time.Second), 500*time.Millisecond) }
	members, spares := p.members, p.spares
	var fs []fault
	var deck, next []faultKind
	// The first deck's opening cards, and the dead fault that follows a join, are dealt even past d.
	head, first := headCards, true
	joined := false // the last fault was a join
	t := ms(500, 1500)
	for t < p.d-2*time.Second || head > 0 || len(next) > 0 {
		var k faultKind
		if len(next) > 0 {
			k, next = next[0], next[1:]
		} else {
			if len(deck) == 0 {
				deck, first = newDeck(r, p.partitions, first, p.seed), false
			}
			k, deck = deck[0], deck[1:]
			head--
		}
		if (k == kindJoin && spares == 0) || ((k == kindDrain || k == kindRemove) && members <= chaosReplicas) {
			continue
		}
		f := fault{at: t, kind: k, node: r.IntN(members), after: ms(1000, 2500)}
		switch k {
		case kindKill:
			f.hold = ms(300, 2700)
		case kindPause:
			f.hold = ms(200, 1800)
		case kindIsolate:
			f.hold = cut()
		case kindSplit:
			f.minority = r.Perm(members)[:1+r.IntN(max(1, (members-1)/2))]
			slices.Sort(f.minority)
			f.hold = cut()
		case kindOneway:
			f.peer = (f.node + 1 + r.IntN(members-1)) % members
			f.hold = cut()
		case kindClock:
			f.offset = time.Duration(30+r.IntN(270)) * time.Second
			if r.IntN(2) == 0 {
				f.offset = -f.offset
			}
			if r.IntN(4) == 0 {
				f.offset = 0 // back to the true clock: a step the other way
			}
		case kindDead:
			f.hold = p.deadTimeout + ms(2000, 3000)
			if joined {
				f.node, joined = r.IntN(members-1), false // an older member, whose replicas the new node takes
			}
		case kindJoin:
			f.node = members // the spare's place in the member list
			members, spares = members+1, spares-1
			next, joined = append(next, kindDead, kindReshard, kindDrain, kindRemove), true
		case kindTransfer:
			f.peer, f.shard = r.IntN(members), r.IntN(chaosShards)
		case kindReshard:
			f.shard, f.hold = r.IntN(chaosShards), ms(300, 2700) // one of the first shards: ranges halve each time
		case kindDrain:
			f.hold = ms(0, 2000) // drained this long before the undrain
		case kindRemove:
			members, spares = members-1, spares+1
		}
		fs = append(fs, f)
		t += f.hold + f.after
	}
	return fs
}

// headCards: how many opening kinds of its first deck a plan always deals.
const headCards = 3

// newDeck shuffles every usable kind. The first deck of a plan opens with headCards kinds picked by rotating
// the list by headCards×seed: consecutive seeds — a campaign's schedules — open with different kinds, so three
// schedules in a row deal every kind even though one schedule has room for only a handful of faults.
func newDeck(r *rand.Rand, partitions, first bool, seed uint64) []faultKind {
	var d []faultKind
	for _, k := range kinds {
		if k == kindDrain || k == kindRemove || k == kindReshard {
			continue // dealt after a join
		}
		if partitions || !k.needsPartitions() {
			d = append(d, k)
		}
	}
	shuffle := func(s []faultKind) { r.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] }) }
	if !first {
		shuffle(d)
		return d
	}
	k := int(seed * headCards % uint64(len(d)))
	d = slices.Concat(d[k:], d[:k])
	shuffle(d[:headCards])
	shuffle(d[headCards:])
	return d
}

// nemesis carries out a plan on a cluster.
type nemesis struct {
	t      *testing.T
	c      *testCluster
	h      *history
	start  time.Time
	counts map[faultKind]int
	kills  []time.Duration // history times of kind-kill SIGKILLs (for unavailability windows)
	moves  int             // dead faults whose replicas were seen re-placed
}

func newNemesis(t *testing.T, c *testCluster, h *history) *nemesis {
	return &nemesis{t: t, c: c, h: h, start: time.Now(), counts: map[faultKind]int{}}
}

func (nm *nemesis) logf(format string, args ...any) {
	nm.t.Logf("nemesis %6.2fs: %s", time.Since(nm.start).Seconds(), fmt.Sprintf(format, args...))
}

func (nm *nemesis) run(fs []fault) error {
	for _, f := range fs {
		if w := time.Until(nm.start.Add(f.at)); w > 0 {
			time.Sleep(w)
		}
		if err := nm.apply(f); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		nm.counts[f.kind]++
		time.Sleep(f.after)
	}
	return nil
}

func (nm *nemesis) apply(f fault) error {
	if f.kind == kindJoin {
		return nm.join()
	}
	ms := nm.c.nodes()
	n := ms[f.node%len(ms)]
	switch f.kind {
	case kindKill:
		n.kill()
		nm.kills = append(nm.kills, nm.h.now())
		nm.logf("SIGKILL %s, restart after %v", n.id, f.hold)
		time.Sleep(f.hold)
		return n.start()
	case kindPause:
		nm.logf("SIGSTOP %s for %v", n.id, f.hold)
		n.signal(syscall.SIGSTOP)
		time.Sleep(f.hold)
		n.signal(syscall.SIGCONT)
	case kindIsolate:
		nm.logf("isolate %s from its peers for %v", n.id, f.hold)
		return nm.partition([]*node{n}, others(ms, n), f.hold)
	case kindSplit:
		var minority, majority []*node
		for i, m := range ms {
			if slices.Contains(f.minority, i) {
				minority = append(minority, m)
			} else {
				majority = append(majority, m)
			}
		}
		nm.logf("split %s | %s for %v", ids(minority), ids(majority), f.hold)
		return nm.partition(minority, majority, f.hold)
	case kindOneway:
		p := ms[f.peer%len(ms)]
		nm.logf("drop %s -> %s for %v", n.id, p.id, f.hold)
		if err := nm.c.net.block(n.idx, p.idx, true); err != nil {
			return err
		}
		time.Sleep(f.hold)
		return nm.c.net.heal()
	case kindClock:
		nm.logf("clock step on %s: offset %v -> %v (restart)", n.id, n.clock, f.offset)
		n.kill()
		n.clock = f.offset
		return n.start()
	case kindDead:
		return nm.dead(n, f.hold)
	case kindTransfer:
		nm.transfer(f.shard, ms[f.peer%len(ms)])
	case kindDrain:
		if nm.drain(n) {
			time.Sleep(f.hold)
		}
		nm.undrain(n)
	case kindRemove:
		return nm.remove(n)
	case kindReshard:
		return nm.reshard(f.shard, n, f.hold)
	}
	return nil
}

// partition cuts every link between a and b, both directions, from a's side, and heals after hold.
func (nm *nemesis) partition(a, b []*node, hold time.Duration) error {
	for _, x := range a {
		for _, y := range b {
			if err := nm.c.net.block(x.idx, y.idx, true); err != nil {
				return err
			}
			if err := nm.c.net.block(x.idx, y.idx, false); err != nil {
				return err
			}
		}
	}
	// The gossip view is taken in the hold's last 2.5 s (status waits up to 2 s for peers) and bounded by its
	// end: taken after the hold, it made a cut up to 2 s longer than planned, past the dead-node timeout on a
	// loaded machine. A short cut may leave it no time: it then says so.
	end := time.Now().Add(hold)
	time.Sleep(max(0, hold-2500*time.Millisecond))
	view := nm.gossipView(b[0], a, end)
	time.Sleep(time.Until(end))
	nm.logf("before healing, %s sees %s", b[0].id, view)
	return nm.c.net.heal()
}

// gossipView is how observer's gossip currently sees the nodes of ns, e.g. "n1=suspect": evidence in the log
// that a cut took effect (a short one may end before the failure detector notices).
func (nm *nemesis) gossipView(observer *node, ns []*node, by time.Time) string {
	// Status waits up to 2 s for peers' reports, and a cut peer never answers: by bounds the wait.
	ctx, cancel := context.WithDeadline(context.Background(), by)
	defer cancel()
	st, err := observer.client.ClusterStatus(ctx)
	if err != nil {
		return "nothing (" + err.Error() + ")"
	}
	var out []string
	for _, x := range st.Nodes {
		if slices.ContainsFunc(ns, func(n *node) bool { return n.id == x.ID }) {
			out = append(out, x.ID+"="+x.State)
		}
	}
	return strings.Join(out, ",")
}

// dead keeps n down for at least hold and until the cluster has re-placed its replicas (at most 20 s more),
// then restarts it.
func (nm *nemesis) dead(n *node, hold time.Duration) error {
	had := -1 // unknown: no member answered
	if p := nm.placement(); p != nil {
		had = p[n.id]
	}
	n.kill()
	nm.logf("SIGKILL %s (holds %d replicas) past the dead-node timeout, for at least %v", n.id, had, hold)
	t0 := time.Now()
	moved := had == 0
	for time.Since(t0) < hold || (!moved && time.Since(t0) < hold+20*time.Second) {
		time.Sleep(250 * time.Millisecond)
		if p := nm.placement(); !moved && p != nil && p[n.id] == 0 {
			moved = true
			nm.moves++
			nm.logf("replicas of %s re-placed %.1fs after the kill; replicas per node now %v", n.id,
				time.Since(t0).Seconds(), p)
		}
	}
	if !moved {
		nm.logf("replicas of %s still placed on it after %v", n.id, time.Since(t0).Round(time.Millisecond))
	}
	return n.start()
}

// placement counts the shards placed on each node as the first running member that answers reports it (nil:
// no answer). Nodes holding none are absent.
func (nm *nemesis) placement() map[string]int {
	for _, m := range nm.c.up() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		st, err := m.client.ClusterStatus(ctx)
		cancel()
		if err != nil || len(st.Shards) == 0 {
			continue
		}
		out := map[string]int{}
		for _, s := range st.Shards {
			for _, id := range s.Replicas {
				out[id]++
			}
		}
		return out
	}
	return nil
}

// join starts the next spare with --join to every member and makes it a member once it knows the cluster.
func (nm *nemesis) join() error {
	c := nm.c
	c.mu.Lock()
	if len(c.spares) == 0 {
		c.mu.Unlock()
		return nil
	}
	n := c.spares[0]
	c.spares = c.spares[1:]
	var peers []string
	for _, m := range c.members {
		peers = append(peers, m.gossip)
	}
	c.mu.Unlock()
	n.args = append(slices.Clone(n.args), "--join", strings.Join(peers, ","))
	nm.logf("start %s, joining %s", n.id, strings.Join(peers, ","))
	if err := n.start(); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		st, err := n.client.ClusterStatus(ctx)
		cancel()
		if err == nil && len(st.Shards) > 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not join within 30s", n.id)
		}
		time.Sleep(250 * time.Millisecond)
	}
	c.mu.Lock()
	c.members = append(c.members, n)
	c.mu.Unlock()
	nm.logf("%s joined", n.id)
	return nil
}

func others(ms []*node, n *node) []*node {
	return slices.DeleteFunc(slices.Clone(ms), func(m *node) bool { return m == n })
}

func ids(ns []*node) string {
	var s []string
	for _, n := range ns {
		s = append(s, n.id)
	}
	return strings.Join(s, ",")
}

// fmtCounts prints fault counts in kinds order: "kill=3 pause=1 …".
func fmtCounts(c map[faultKind]int) string {
	var s []string
	for _, k := range kinds {
		s = append(s, fmt.Sprintf("%s=%d", k, c[k]))
	}
	return strings.Join(s, " ")
}
