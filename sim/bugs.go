package sim

import (
	"fmt"

	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/storage"
)

// Bugs are deliberate faults planted in the system under test, so a self-test can show that the checks catch
// them. The zero value plants nothing.
type Bugs struct {
	// LoseAckedPuts acknowledges every Nth put of each client without proposing it; 0 = off.
	LoseAckedPuts int
	// StaleReads serves gets from the most lagging replica, skipping the read-index protocol.
	StaleReads bool
	// NondeterministicApply makes each replica store puts with a text of its own, as a state machine that read
	// a local clock would. (Planting it on one replica only is not reliably caught: a snapshot installed from
	// another replica heals it, as it would in production.)
	NondeterministicApply bool
}

func (b Bugs) wrap() wrapFSM {
	if !b.NondeterministicApply {
		return nil
	}
	return func(i int, f *storage.ShardFSM) raft.FSM { return divergingFSM{f, fmt.Sprintf(" (n%d)", i)} }
}

// divergingFSM rewrites the texts of put commands before the real state machine applies them.
type divergingFSM struct {
	*storage.ShardFSM
	suffix string
}

func (d divergingFSM) Apply(l *raft.Log) any { return d.ApplyBatch([]*raft.Log{l})[0] }

func (d divergingFSM) ApplyBatch(logs []*raft.Log) []any {
	out := make([]*raft.Log, len(logs))
	for i, l := range logs {
		out[i] = l
		cmd, err := storage.DecodeCommand(l.Data)
		if l.Type != raft.LogCommand || err != nil || cmd.Type != storage.CmdPut {
			continue
		}
		for j := range cmd.Puts {
			cmd.Puts[j].Text += d.suffix
		}
		c := *l
		c.Data, _ = storage.EncodePut(cmd.Puts)
		out[i] = &c
	}
	return d.ShardFSM.ApplyBatch(out)
}
