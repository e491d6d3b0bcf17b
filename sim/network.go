package sim

import (
	"sync"
	"sync/atomic"
	"time"
)

// maxNodes bounds the replicas on the network (up to maxVoters voters and a spare for moves); fixed-size arrays
// keep Faults a comparable value.
const (
	maxVoters = 5
	maxNodes  = maxVoters + 1
)

// Faults is the state of the simulated network at one moment: which directed links lose messages and how long each
// delays them. A partition is cuts in both directions; a one-way drop is a cut in one.
type Faults struct {
	Cut   [maxNodes][maxNodes]bool          // Cut[a][b]: messages from a to b are lost
	Delay [maxNodes][maxNodes]time.Duration // Delay[a][b]: added to every message from a to b
}

// Network is the shared wire of every replica's transport. The nemesis swaps its Faults; transports consult it on
// each leg of each RPC.
type Network struct {
	mu     sync.Mutex
	faults Faults
	closed chan struct{}
	once   sync.Once
	stats  netStats
}

type netStats struct {
	legs, dropped, delayed, snapshots atomic.Int64
}

// NetStats counts what the network did during a run.
type NetStats struct {
	Legs      int64 // message legs (request or response) that reached the fault check
	Dropped   int64 // legs lost to a cut link
	Delayed   int64 // legs held back by a link delay
	Snapshots int64 // InstallSnapshot RPCs that completed
}

func newNetwork() *Network { return &Network{closed: make(chan struct{})} }

// Set replaces the network's faults.
func (n *Network) Set(f Faults) {
	n.mu.Lock()
	n.faults = f
	n.mu.Unlock()
}

// Heal removes every fault.
func (n *Network) Heal() { n.Set(Faults{}) }

// Close makes every pending and future message fail, so raft shutdown never waits on a delayed RPC.
func (n *Network) Close() { n.once.Do(func() { close(n.closed) }) }

// Stats returns the counters so far.
func (n *Network) Stats() NetStats {
	return NetStats{Legs: n.stats.legs.Load(), Dropped: n.stats.dropped.Load(),
		Delayed: n.stats.delayed.Load(), Snapshots: n.stats.snapshots.Load()}
}

// leg carries one message from one node to another: it waits the link's delay, then loses the message if the link
// is cut at delivery time (faults may change while a message is in flight, as on a real wire).
func (n *Network) leg(from, to int) error {
	n.stats.legs.Add(1)
	n.mu.Lock()
	d := n.faults.Delay[from][to]
	n.mu.Unlock()
	if d > 0 {
		n.stats.delayed.Add(1)
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-n.closed:
			t.Stop()
			return ErrClosed
		}
	}
	select {
	case <-n.closed:
		return ErrClosed
	default:
	}
	n.mu.Lock()
	cut := n.faults.Cut[from][to]
	n.mu.Unlock()
	if cut {
		n.stats.dropped.Add(1)
		return ErrDropped
	}
	return nil
}
