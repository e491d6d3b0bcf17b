package cluster

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"

	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/internal/formats"
	"github.com/memcluster/memcluster/shardmap"
)

// NodeInfo is a member as recorded in the meta group.
type NodeInfo struct {
	ID         string `json:"id"`
	RaftAddr   string `json:"raft_addr"`
	GossipAddr string `json:"gossip_addr"`
	HTTPAddr   string `json:"http_addr"`
	Zone       string `json:"zone,omitempty"` // failure domain (--zone)
	// Records is the newest memory record format the node's build reads (storage.RecordFormat); absent (0): a
	// build that reads only the first. Proposers write the newest format every member reads (records.go).
	Records int `json:"records,omitempty"`
	// Commands is the newest raft command format the node's build reads (storage.CommandFormat); absent (0): a
	// build that reads only the first (records.go).
	Commands int `json:"commands,omitempty"`
}

// Operator states of a member, kept in MetaState.States (no entry: active).
const (
	NodeDraining = "draining" // every replica and leadership moves off it; it keeps serving by routing
	NodeRemoved  = "removed"  // out of the cluster for good; if it comes back it is refused
)

// metaFormat is the meta state's format version. Format 2 added the shard map (Buckets, Ranges, MapVersion,
// Split); a format-1 state (an older build's snapshot or log) reads as every shard owning its whole bucket,
// which routes every user where FNV-1a mod shards did.
const metaFormat = formats.Meta

// MetaState is the cluster configuration replicated by the meta group.
type MetaState struct {
	Version   int                 `json:"version"` // format version, metaFormat
	Shards    int                 `json:"shards"`
	Replicas  int                 `json:"replicas"`
	Nodes     map[string]NodeInfo `json:"nodes"`
	Placement [][]string          `json:"placement"` // shard -> replica node ids
	Epoch     uint64              `json:"epoch"`     // bumped on every change
	// States holds operator states (NodeDraining, NodeRemoved) by node id; Paused stops rebalancing moves
	// (repairs of lost replicas go on). Both were added in format version 1 as optional fields.
	States map[string]string `json:"states,omitempty"`
	Paused bool              `json:"rebalance_paused,omitempty"`
	// The shard map (format 2): shard s owns Ranges[s] of the hash space's Buckets buckets (the shard count
	// the cluster formed with). MapVersion is bumped by every change; Split is the split under way, if any.
	Buckets    int              `json:"buckets,omitempty"`
	Ranges     []shardmap.Range `json:"ranges,omitempty"`
	MapVersion uint64           `json:"map_version,omitempty"`
	Split      *SplitState      `json:"split,omitempty"`

	smap *shardmap.Map // built from Buckets and Ranges; shared by clones (never mutated)
}

// SplitState is a split under way: Child exists in the map and the placement, but its users are routed to
// Parent until the child's group has formed from the parent's split entry.
type SplitState struct {
	Parent uint32 `json:"parent"`
	Child  uint32 `json:"child"`
}

// Route is the shard that serves user now: its owner in the map, or the parent while that owner is a split's
// child that has not formed yet.
func (s MetaState) Route(user string) uint32 {
	sh := s.Owner(user)
	if s.Split != nil && sh == s.Split.Child {
		return s.Split.Parent
	}
	return sh
}

// Owner is the shard whose range holds user, a split's child included: where a request that a parent refused
// (ErrWrongShard) goes next.
func (s MetaState) Owner(user string) uint32 {
	if s.smap == nil {
		return 0
	}
	return s.smap.Lookup(user)
}

// normalize reads a format-1 state as format 2 and builds the map.
func (s *MetaState) normalize() error {
	if s.Shards > 0 && s.Buckets == 0 {
		s.Buckets, s.Ranges = s.Shards, shardmap.Initial(uint32(s.Shards))
	}
	s.Version = metaFormat
	if s.Shards == 0 {
		return nil
	}
	if len(s.Ranges) != s.Shards {
		return fmt.Errorf("%w: %d ranges for %d shards", shardmap.ErrBadMap, len(s.Ranges), s.Shards)
	}
	m, err := shardmap.New(uint32(s.Buckets), slices.Clone(s.Ranges))
	if err != nil {
		return err
	}
	s.smap = m
	return nil
}

// StateOf is a member's operator state ("" when active).
func (s MetaState) StateOf(id string) string { return s.States[id] }

// Initialized reports whether the cluster has been formed.
func (s MetaState) Initialized() bool { return s.Shards > 0 }

func (s *MetaState) clone() MetaState {
	c := *s
	c.Nodes = make(map[string]NodeInfo, len(s.Nodes))
	for k, v := range s.Nodes {
		c.Nodes[k] = v
	}
	c.States = make(map[string]string, len(s.States))
	for k, v := range s.States {
		c.States[k] = v
	}
	c.Placement = make([][]string, len(s.Placement))
	for i, r := range s.Placement {
		c.Placement[i] = slices.Clone(r)
	}
	c.Ranges = slices.Clone(s.Ranges)
	if s.Split != nil {
		sp := *s.Split
		c.Split = &sp
	}
	return c
}

// metaCommand is the meta group's log entry (JSON, versioned by the V field).
type metaCommand struct {
	V         int        `json:"v"`
	Op        string     `json:"op"` // init, upsert_node, set_placement, set_state, set_paused, split_begin, split_done
	Node      *NodeInfo  `json:"node,omitempty"`
	Nodes     []NodeInfo `json:"nodes,omitempty"`
	Shards    int        `json:"shards,omitempty"`
	Replicas  int        `json:"replicas,omitempty"`
	Placement [][]string `json:"placement,omitempty"`
	NodeID    string     `json:"node_id,omitempty"` // set_state
	State     string     `json:"state,omitempty"`   // set_state: "", NodeDraining or NodeRemoved
	Paused    bool       `json:"paused,omitempty"`  // set_paused
	Shard     uint32     `json:"shard,omitempty"`   // split_begin: the parent; split_done: the child
}

const metaCommandVersion = 1

// metaFSM keeps MetaState in memory; raft snapshots persist it and the log replays it on start.
type metaFSM struct {
	mu       sync.RWMutex
	state    MetaState
	log      *slog.Logger
	onChange func()
	halted   bool
}

func newMetaFSM(log *slog.Logger, onChange func()) *metaFSM {
	return &metaFSM{state: MetaState{Version: metaFormat, Nodes: map[string]NodeInfo{}}, log: log, onChange: onChange}
}

func (f *metaFSM) State() MetaState {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.state.clone()
}

// read runs fn on the state under the read lock, without a copy: fn must neither keep nor change it. The
// request path routes with it; a clone per request (three for a forwarded put) showed in write profiles.
func (f *metaFSM) read(fn func(s *MetaState)) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	fn(&f.state)
}

// Apply implements raft.FSM. An entry it cannot decode halts the meta replica (see storage.ShardFSM).
func (f *metaFSM) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	f.mu.Lock()
	if f.halted {
		f.mu.Unlock()
		return ErrStopped
	}
	var c metaCommand
	err := json.Unmarshal(l.Data, &c)
	if err == nil && c.V != metaCommandVersion {
		err = fmt.Errorf("command version %d", c.V)
	}
	if err == nil {
		err = f.apply(c)
	}
	if err != nil {
		f.halted = true
		f.mu.Unlock()
		f.log.Error("meta replica halted on an entry it cannot apply", "index", l.Index, "err", err)
		return err
	}
	f.state.Epoch++
	f.mu.Unlock()
	if f.onChange != nil {
		f.onChange()
	}
	return nil
}

func (f *metaFSM) apply(c metaCommand) error {
	s := &f.state
	switch c.Op {
	case "init":
		if s.Initialized() {
			return nil // a second bootstrapper's init loses the race harmlessly
		}
		s.Shards, s.Replicas, s.Placement = c.Shards, c.Replicas, c.Placement
		for _, n := range c.Nodes {
			s.Nodes[n.ID] = n
		}
		return s.normalize()
	case "upsert_node":
		if c.Node == nil {
			return fmt.Errorf("upsert_node without node")
		}
		if s.States[c.Node.ID] == NodeRemoved {
			return nil // a removed node stays out, whatever a stale proposer thought
		}
		s.Nodes[c.Node.ID] = *c.Node
	case "set_state":
		switch {
		case c.State != "" && c.State != NodeDraining && c.State != NodeRemoved:
			return fmt.Errorf("set_state: unknown state %q", c.State)
		case s.States[c.NodeID] == NodeRemoved:
			return nil // removal is final
		}
		if s.States == nil {
			s.States = map[string]string{}
		}
		if c.State == "" {
			delete(s.States, c.NodeID)
		} else {
			s.States[c.NodeID] = c.State
		}
	case "set_paused":
		s.Paused = c.Paused
	case "set_placement":
		if len(c.Placement) != s.Shards {
			// Planned before a split added a shard: stale, and harmless to drop (the next plan redoes it).
			f.log.Info("meta: placement of another shard count ignored", "placement", len(c.Placement), "shards", s.Shards)
			return nil
		}
		s.Placement = c.Placement
	case "split_begin":
		return f.splitBegin(c.Shard)
	case "split_done":
		if s.Split != nil && s.Split.Child == c.Shard {
			s.Split = nil
			s.MapVersion++
		}
	default:
		return fmt.Errorf("unknown meta op %q", c.Op)
	}
	return nil
}

func (f *metaFSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	b, err := json.Marshal(f.state)
	if err != nil {
		return nil, err
	}
	return metaSnapshot(b), nil
}

func (f *metaFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	var s MetaState
	if err := json.NewDecoder(rc).Decode(&s); err != nil {
		return fmt.Errorf("restore meta: %w", err)
	}
	if s.Version < formats.MetaOldest || s.Version > metaFormat {
		return fmt.Errorf("restore meta: unknown version %d (this build reads up to %d)", s.Version, metaFormat)
	}
	if s.Nodes == nil {
		s.Nodes = map[string]NodeInfo{}
	}
	if err := s.normalize(); err != nil {
		return fmt.Errorf("restore meta: %w", err)
	}
	f.mu.Lock()
	f.state = s
	f.mu.Unlock()
	if f.onChange != nil {
		f.onChange()
	}
	return nil
}

type metaSnapshot []byte

func (m metaSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(m); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (m metaSnapshot) Release() {}

// splitBegin records a split of parent: the next shard id takes the upper half of its range and its
// placement. A split that cannot begin (one is under way, no such shard, a range of one position) was refused
// when proposed; here it is dropped, never an error, which would halt the meta replica.
func (f *metaFSM) splitBegin(parent uint32) error {
	s := &f.state
	if s.Split != nil || int(parent) >= s.Shards {
		f.log.Info("meta: split not begun", "parent", parent, "under_way", s.Split)
		return nil
	}
	lower, upper, err := s.Ranges[parent].Split()
	if err != nil {
		f.log.Info("meta: split not begun", "parent", parent, "err", err)
		return nil
	}
	child := uint32(s.Shards)
	s.Ranges[parent] = lower
	s.Ranges = append(s.Ranges, upper)
	s.Placement = append(s.Placement, slices.Clone(s.Placement[parent]))
	s.Shards++
	s.Split = &SplitState{Parent: parent, Child: child}
	s.MapVersion++
	return s.normalize()
}
