package cluster

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
)

// MinRequestRetention is the shortest request retention memnode accepts: well beyond the longest a proposal may
// be retried (internal calls time out after 30 s) plus the clock skew between nodes.
const MinRequestRetention = time.Minute

// Config is a node's cluster configuration. Zero fields take the defaults stated on each.
type Config struct {
	NodeID     string // required
	DataDir    string // required: raft snapshots live under it
	RaftAddr   string // listen and advertised address of the node's one Raft port; default 127.0.0.1:7481
	GossipAddr string // memberlist bind/advertise address; default 127.0.0.1:7482
	HTTPAddr   string // advertised API address, gossiped so peers can forward; default 127.0.0.1:7480
	Zone       string // failure domain (rack, room, availability zone); replicas of a shard go to distinct zones
	// BindHost, when set (an IP such as 0.0.0.0), is the host the Raft and gossip ports listen on; RaftAddr and
	// GossipAddr then only advertise, and may name a host the peers resolve (a container's service name).
	BindHost string

	Join            []string // gossip addresses of existing members
	BootstrapExpect int      // form a new cluster once this many nodes see each other; 0 = only join
	Shards          int      // number of shards; default 16; fixed when the cluster forms
	Replicas        int      // voters per shard; default 3, capped by live nodes

	// DeadNodeTimeout is how long a node may stay dead before its replicas are placed elsewhere; default 60s.
	DeadNodeTimeout time.Duration
	// ReconcileInterval is how often placement and raft membership are converged; default 1s.
	ReconcileInterval time.Duration
	// MaxMoves bounds the replica moves under way in the whole cluster (default 8); MovesPerNode the moves one
	// node takes part in at once (default 2); MaxTransfers the leadership transfers started per reconcile
	// (default 4). Rebalancing goes at this pace so that foreground traffic keeps its latency.
	MaxMoves, MovesPerNode, MaxTransfers int
	// SplitAboveMemories, when positive, has the meta leader split a shard whose leader holds more memory
	// records than this (one split at a time, the largest shard first); 0 (the default) splits only on demand.
	SplitAboveMemories int64
	// RequestRetention is how long a shard keeps the result of a delete or forget, for a retried proposal of it
	// to find (a retry comes within seconds); shard leaders prune older results (prune.go). Default 24h. memnode
	// refuses less than MinRequestRetention; Config itself takes down to 100ms, so tests can watch pruning.
	RequestRetention time.Duration
	// Raft timing; defaults 500ms, 1s, 500ms (at most the heartbeat timeout), 50ms. The heartbeat timeout is half
	// hashicorp/raft's LAN value so that a dead leader's shard accepts writes again within 2 × ElectionTimeout
	// (measured by chaos.TestLeaderFailover: docs/reliability.md); heartbeats go out every tenth of it.
	// CommitTimeout is the meta group's: see ShardCommitTimeout.
	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	CommitTimeout      time.Duration
	// ShardCommitTimeout is how often an idle shard leader tells each follower its commit index again (raft's
	// CommitTimeout; the wait is randomised up to twice it); default 500ms. New entries do not wait for it: the
	// leader sends them at once and each AppendEntries carries the commit index, so it only bounds how long a
	// follower's state trails the leader's after the writes stop (stale reads, catch-up checks). Shard groups
	// sent one such refresh per follower every 50-100 ms with raft's default, the main idle cost of many replicas.
	ShardCommitTimeout time.Duration
	// HeartbeatCoalesce turns on heartbeat coalescing (heartbeats.go): empty AppendEntries (heartbeats, commit
	// refreshes) that this node's shard groups send to one other node within HeartbeatCoalesceWindow go as one
	// batch on one connection. Off by default: it halves the idle cost, but one benchmark run that met a
	// machine-wide stall did not settle (docs/architecture.md, "What is not here yet"). The window defaults to
	// 10ms, at most a twentieth of the heartbeat timeout.
	HeartbeatCoalesce       bool
	HeartbeatCoalesceWindow time.Duration
	// SnapshotThreshold: log entries between snapshots; default 128. A shard's snapshots are lazy markers
	// (storage/lazysnap.go), cheap to take; the meta group's hold its state.
	SnapshotThreshold uint64
	// ShardSnapshotInterval: how often a shard group checks whether a snapshot is due (raft's
	// SnapshotInterval, with jitter); default 10s.
	ShardSnapshotInterval time.Duration
	// ShardTrailingLogs: log entries a shard group keeps after a snapshot (raft's TrailingLogs), so a follower
	// that falls behind by less catches up from the log instead of a snapshot; default 10240.
	ShardTrailingLogs uint64
	// OverloadWait: how long a proposal waits for its leader's storage to take writes again while compactions
	// trail (storage.DB.WaitWritable); then it is refused, unproposed, with storage.ErrOverloaded. Default 1s.
	OverloadWait time.Duration
	// GossipProfile: "lan" (default) or "local" (fast failure detection for tests on one host).
	GossipProfile string

	// RaftListener, when set, is used instead of listening on RaftAddr (tests pass a :0 listener).
	RaftListener net.Listener
	Logger       *slog.Logger
	Registry     prometheus.Registerer
	// GossipKey, when set (16, 24 or 32 bytes), encrypts and authenticates gossip (AES-GCM); every node needs it.
	GossipKey []byte
	// TLS, when set, secures node-to-node traffic: the Raft port and internal calls use it as both server and
	// client configuration (mutual TLS: RootCAs and ClientCAs are the cluster CA, Certificates the node's).
	TLS *tls.Config
	// ClusterToken, when set, is sent as a bearer token on every node-to-node call (the receiving API checks it).
	ClusterToken string
	// Tracer spans shard operations on the coordinator and on the serving node; default the global provider's.
	Tracer trace.Tracer
}

func (c Config) withDefaults() Config {
	def := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	def(&c.RaftAddr, "127.0.0.1:7481")
	def(&c.GossipAddr, "127.0.0.1:7482")
	def(&c.HTTPAddr, "127.0.0.1:7480")
	def(&c.GossipProfile, "lan")
	if c.Shards == 0 {
		c.Shards = 16
	}
	if c.Replicas == 0 {
		c.Replicas = 3
	}
	durDef := func(p *time.Duration, v time.Duration) {
		if *p == 0 {
			*p = v
		}
	}
	durDef(&c.DeadNodeTimeout, 60*time.Second)
	durDef(&c.ReconcileInterval, time.Second)
	durDef(&c.RequestRetention, 24*time.Hour)
	for _, d := range []struct {
		p *int
		v int
	}{{&c.MaxMoves, 8}, {&c.MovesPerNode, 2}, {&c.MaxTransfers, 4}} {
		if *d.p == 0 {
			*d.p = d.v
		}
	}
	durDef(&c.HeartbeatTimeout, 500*time.Millisecond)
	durDef(&c.ElectionTimeout, time.Second)
	durDef(&c.LeaderLeaseTimeout, min(500*time.Millisecond, c.HeartbeatTimeout))
	durDef(&c.CommitTimeout, 50*time.Millisecond)
	durDef(&c.ShardCommitTimeout, 500*time.Millisecond)
	durDef(&c.HeartbeatCoalesceWindow, min(10*time.Millisecond, c.HeartbeatTimeout/20))
	if c.SnapshotThreshold == 0 {
		c.SnapshotThreshold = 128
	}
	durDef(&c.ShardSnapshotInterval, 10*time.Second)
	durDef(&c.OverloadWait, time.Second)
	if c.ShardTrailingLogs == 0 {
		c.ShardTrailingLogs = 10240
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Registry == nil {
		c.Registry = prometheus.NewRegistry()
	}
	if c.Tracer == nil {
		c.Tracer = otel.GetTracerProvider().Tracer("memcluster/cluster")
	}
	return c
}

// Validate checks fields alone and against each other.
func (c Config) Validate() error {
	bad := func(f, msg string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrBadConfig, f, fmt.Sprintf(msg, a...))
	}
	switch {
	case c.NodeID == "":
		return bad("node-id", "required")
	case c.DataDir == "":
		return bad("data-dir", "required")
	case c.Shards < 1 || c.Shards > 4096:
		return bad("shards", "must be 1..4096, got %d", c.Shards)
	case c.Replicas < 1 || c.Replicas > 7:
		return bad("replicas", "must be 1..7, got %d", c.Replicas)
	case c.SplitAboveMemories < 0:
		return bad("split-above-memories", "must not be negative")
	case c.RequestRetention < 100*time.Millisecond:
		return bad("request-retention", "must be at least 100ms, got %v", c.RequestRetention)
	case c.BootstrapExpect < 0:
		return bad("bootstrap-expect", "must not be negative")
	case c.HeartbeatTimeout < 10*time.Millisecond || c.ElectionTimeout < 10*time.Millisecond:
		return bad("raft-heartbeat-timeout", "raft timeouts must be at least 10ms (heartbeat %v, election %v)", c.HeartbeatTimeout, c.ElectionTimeout)
	case c.LeaderLeaseTimeout > c.HeartbeatTimeout:
		return bad("leader-lease-timeout", "must not exceed the heartbeat timeout")
	case c.CommitTimeout < time.Millisecond || c.ShardCommitTimeout < time.Millisecond:
		return bad("raft-commit-timeout", "must be at least 1ms (meta %v, shards %v)", c.CommitTimeout, c.ShardCommitTimeout)
	case c.HeartbeatCoalesceWindow <= 0 || c.HeartbeatCoalesceWindow >= c.HeartbeatTimeout/10:
		// Heartbeats go out every tenth of the heartbeat timeout: a batch must not hold one back a whole period.
		return bad("raft-heartbeat-coalesce-window", "must be positive and below a tenth of the heartbeat timeout (%v), got %v",
			c.HeartbeatTimeout/10, c.HeartbeatCoalesceWindow)
	case c.GossipProfile != "lan" && c.GossipProfile != "local":
		return bad("gossip-profile", "want lan or local, got %q", c.GossipProfile)
	}
	if n := len(c.GossipKey); n != 0 && n != 16 && n != 24 && n != 32 {
		return bad("gossip-key", "must be 16, 24 or 32 bytes (base64), got %d", n)
	}
	if c.BindHost != "" && net.ParseIP(c.BindHost) == nil {
		return bad("bind-host", "want an IP address such as 0.0.0.0, got %q", c.BindHost)
	}
	for f, a := range map[string]string{"raft-addr": c.RaftAddr, "gossip-addr": c.GossipAddr, "http-addr": c.HTTPAddr} {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return bad(f, "%v", err)
		}
	}
	return nil
}

// ListenAddr is where a port advertised as addr listens: on bindHost (when set) with addr's port, else on addr.
func ListenAddr(bindHost, addr string) string {
	if bindHost == "" {
		return addr
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return net.JoinHostPort(bindHost, port)
}
