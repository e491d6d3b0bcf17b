package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/storage"
)

// Node is one memnode's membership in the cluster. Construct with New, then Start.
type Node struct {
	cfg     Config
	db      *storage.DB
	newIdx  IndexFactory
	log     *slog.Logger
	metrics *metrics

	mux   *mux
	hb    *heartbeats // nil: heartbeat coalescing is off
	ml    *memberlist.Memberlist
	meta  *metaFSM
	mraft *raftGroup

	mu          sync.RWMutex
	replicas    map[uint32]*Replica
	held        map[uint32]bool      // replicas held before a restart, not yet started or dropped (restart.go)
	heldSince   time.Time            // reconcile loop only: when the meta state first allowed settling them
	outSince    map[uint32]time.Time // local replicas no longer in the placement, since when
	deadSince   map[string]time.Time // meta leader only: members not alive, since when
	bootInit    *metaCommand         // set on a bootstrapper until init is committed
	leaderHint  map[uint32]string
	moving      map[int]bool         // meta leader only: shards whose placement has not converged
	told        map[string]time.Time // meta leader only: removed nodes told so, when
	transferred map[int]time.Time    // meta leader only: when a shard's last automatic leader transfer started
	planned     time.Time            // meta leader only: when it last planned (rebalanceEvery)
	splitBusy   atomic.Bool          // meta leader only: a split step is running (split.go)
	startMu     sync.Mutex           // held while a replica starts, and while a born child's state is dropped
	loadSem     chan struct{}        // one index load behind a started group at a time (loading.go)
	persistMu   sync.Mutex           // orders writes of the replica list; persisted is the last one written
	persisted   []byte
	pruneAt     map[uint32]time.Time // reconcile loop only: when a led shard next checks for request results to prune
	removed     atomic.Bool          // this node was removed from the cluster
	records     atomic.Uint32        // the storage.RecordFormat proposals write (records.go)
	commands    atomic.Uint32        // the storage.CommandFormat proposals write (records.go)

	http   *http.Client
	kickCh chan struct{}
	stop   chan struct{}
	wg     sync.WaitGroup
}

// New validates cfg and returns a node that has not started.
func New(cfg Config, db *storage.DB, idx IndexFactory) (*Node, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := &Node{
		cfg: cfg, db: db, newIdx: idx, log: cfg.Logger.With("node", cfg.NodeID),
		replicas: map[uint32]*Replica{}, held: map[uint32]bool{}, outSince: map[uint32]time.Time{}, deadSince: map[string]time.Time{},
		leaderHint: map[uint32]string{}, told: map[string]time.Time{}, transferred: map[int]time.Time{},
		pruneAt: map[uint32]time.Time{},
		http: &http.Client{Timeout: 30 * time.Second,
			Transport: &http.Transport{MaxIdleConnsPerHost: 64, TLSClientConfig: cfg.TLS}},
		kickCh: make(chan struct{}, 1), stop: make(chan struct{}), loadSem: make(chan struct{}, 1),
	}
	n.metrics = newMetrics(cfg.Registry, n)
	return n, nil
}

// ID returns the node id.
func (n *Node) ID() string { return n.cfg.NodeID }

// Start checks the data dir's identity, opens the raft port, the meta group and the local replicas, joins gossip
// and starts the reconcile loop.
func (n *Node) Start() error {
	if err := n.checkIdentity(); err != nil {
		return err
	}
	ln := n.cfg.RaftListener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", ListenAddr(n.cfg.BindHost, n.cfg.RaftAddr)); err != nil {
			return fmt.Errorf("listen raft %s: %w", ListenAddr(n.cfg.BindHost, n.cfg.RaftAddr), err)
		}
	}
	m, err := newMux(ln, n.cfg.RaftAddr, n.cfg.TLS, n.log)
	if err != nil {
		ln.Close()
		return err
	}
	n.mux = m
	if n.cfg.HeartbeatCoalesce {
		n.hb = newHeartbeats(m.layer(heartbeatStream), n.cfg.HeartbeatCoalesceWindow, raftRPCTimeout,
			n.log.With("component", "heartbeats"), n.metrics)
	}
	n.meta = newMetaFSM(n.log.With("group", "meta"), n.kick)
	if n.mraft, err = n.openRaft(MetaGroup, n.meta, true, nil); err != nil {
		return err
	}
	if !n.mraft.hasState && n.cfg.BootstrapExpect == 0 && len(n.cfg.Join) == 0 {
		n.Stop()
		return fmt.Errorf("%w: join: the data dir holds no cluster state: give --join host:port to join a cluster, "+
			"--bootstrap-expect N to form one, or --dev", ErrBadConfig)
	}
	n.holdPersistedReplicas()
	if err := n.startGossip(); err != nil {
		return err
	}
	n.wg.Add(2)
	go n.joinLoop()
	go n.loop()
	n.log.Info("node started", "raft", n.cfg.RaftAddr, "gossip", n.cfg.GossipAddr, "http", n.cfg.HTTPAddr,
		"existing_state", n.mraft.hasState)
	return nil
}

func (n *Node) checkIdentity() error {
	if gone, _ := n.db.GetNode("removed"); gone != nil {
		return fmt.Errorf("%w: node %q: wipe the data dir to join again as a new node", ErrRemoved, n.cfg.NodeID)
	}
	v, err := n.db.GetNode("node-id")
	if err != nil {
		return fmt.Errorf("read node id: %w", err)
	}
	if v != nil && string(v) != n.cfg.NodeID {
		return fmt.Errorf("%w: data dir is node %q, started as %q", ErrNodeIDMismatch, v, n.cfg.NodeID)
	}
	if v == nil {
		return n.db.SetNode("node-id", []byte(n.cfg.NodeID))
	}
	return nil
}

// joinLoop joins the configured and remembered peers until gossip has company, retrying with backoff, so that
// a restarted node rejoins by itself.
func (n *Node) joinLoop() {
	defer n.wg.Done()
	backoff := 200 * time.Millisecond
	for {
		peers := slices.Clone(n.cfg.Join)
		if b, _ := n.db.GetNode("peers"); b != nil {
			var saved []string
			if json.Unmarshal(b, &saved) == nil {
				peers = append(peers, saved...)
			}
		}
		peers = slices.DeleteFunc(peers, func(p string) bool { return p == n.cfg.GossipAddr })
		// Only an explicit join counts: a restarted node that merely heard gossip aimed at its old, dead self
		// has members but no full state exchange, and can stay marked dead by its peers (seen in CI under -race).
		if len(peers) == 0 {
			n.log.Warn("no peers to join: none given (--join) and none remembered; waiting to be joined")
			return
		}
		if k, err := n.ml.Join(peers); err == nil && k > 0 {
			n.log.Info("joined gossip", "contacted", k)
			n.rememberJoined(peers)
			return
		} else if err != nil {
			n.log.Debug("gossip join", "err", err)
		}
		select {
		case <-n.stop:
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// rememberJoined saves the peers a join reached when no peers are remembered yet, so that a node restarted
// without --join rejoins even if it stopped before its meta state listed the members (rememberPeers keeps the
// list current after that).
func (n *Node) rememberJoined(peers []string) {
	if old, _ := n.db.GetNode("peers"); old != nil {
		return
	}
	if b, err := json.Marshal(peers); err == nil {
		_ = n.db.SetNode("peers", b)
	}
}

func (n *Node) kick() {
	select {
	case n.kickCh <- struct{}{}:
	default:
	}
}

func (n *Node) loop() {
	defer n.wg.Done()
	t := time.NewTicker(n.cfg.ReconcileInterval)
	defer t.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
		case <-n.kickCh:
		}
		n.reconcile()
	}
}

// Stop leaves gossip and shuts every raft group down. It does not close the DB.
func (n *Node) Stop() error {
	select {
	case <-n.stop:
		return nil
	default:
	}
	close(n.stop)
	n.wg.Wait()
	if n.ml != nil {
		_ = n.ml.Leave(time.Second)
		_ = n.ml.Shutdown()
	}
	n.mu.Lock()
	reps := n.replicas
	n.replicas = map[uint32]*Replica{}
	n.mu.Unlock()
	var errs []error
	for _, r := range reps {
		errs = append(errs, r.Shutdown())
	}
	if n.mraft != nil {
		errs = append(errs, stopGroup(n.mraft.raft, n.mraft.wait, n.mraft.trans, n.log.With("group", "meta")))
		n.mraft.trans.Close()
	}
	if n.hb != nil {
		n.hb.close()
	}
	if n.mux != nil {
		n.mux.close()
	}
	return errors.Join(errs...)
}

// MetaState returns this node's copy of the cluster configuration.
func (n *Node) MetaState() MetaState { return n.meta.State() }

// Replica returns the local replica of shard, if any.
func (n *Node) Replica(shard uint32) (*Replica, bool) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	r, ok := n.replicas[shard]
	return r, ok
}

// StaleEmbeddings reports how many memories of the local replica of shard have no vector of the index's model,
// and whether it knows (a replica with indexes).
func (n *Node) StaleEmbeddings(shard uint32) (int, bool) {
	r, ok := n.Replica(shard)
	if !ok || r.Index == nil {
		return 0, false
	}
	if ended, err := r.loadState(); !ended || err != nil {
		return 0, false // not known until the indexes have loaded
	}
	return r.Index.Unsearchable(), true
}

// LocalShards lists the shards this node holds replicas of, sorted.
func (n *Node) LocalShards() []uint32 {
	n.mu.RLock()
	defer n.mu.RUnlock()
	out := make([]uint32, 0, len(n.replicas))
	for s := range n.replicas {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// ShardFor maps a user to its shard under this node's copy of the shard map. While the cluster is forming
// (this node has not yet applied the meta group's first entry) it waits, up to ctx's deadline. A map that is
// out of date is corrected where the request executes: the shard refuses a user it gave away, and the
// routed operations follow (route.go).
func (n *Node) ShardFor(ctx context.Context, user string) (uint32, error) {
	if n.removed.Load() {
		return 0, ErrRemoved
	}
	if _, err := n.ShardCount(ctx); err != nil {
		return 0, err
	}
	var shard uint32
	n.meta.read(func(s *MetaState) { shard = s.Route(user) })
	return shard, nil
}

// IsMetaLeader reports whether this node leads the meta group.
func (n *Node) IsMetaLeader() bool { return n.mraft.raft.State() == raft.Leader }

// Replicas returns how many shard replicas this node hosts.
func (n *Node) Replicas() int { return len(n.LocalShards()) }

// LeaderShards lists the shards whose local replica leads.
func (n *Node) LeaderShards() []uint32 {
	var out []uint32
	for _, s := range n.LocalShards() {
		if r, ok := n.Replica(s); ok && r.IsLeader() {
			out = append(out, s)
		}
	}
	return out
}
