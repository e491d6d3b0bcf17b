package main

import (
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memcluster/memcluster/cluster"
	"github.com/memcluster/memcluster/storage"
)

// config is every memnode setting; each flag is also read from MEMNODE_<FLAG_NAME>.
type config struct {
	version         bool
	dev             bool
	nodeID          string
	dataDir         string
	httpAddr        string
	raftAddr        string
	gossipAddr      string
	bindHost        string
	join            []string
	bootstrapExpect int
	shards          int
	replicas        int
	deadNodeTimeout time.Duration
	zone            string
	maxMoves        int
	movesPerNode    int
	splitAbove      int64
	requestRetain   time.Duration
	raftHeartbeat   time.Duration
	raftElection    time.Duration
	raftCommit      time.Duration
	raftCoalesce    bool
	gossipProfile   string
	logLevel        string
	logFormat       string
	maxBodyBytes    int64
	pprof           bool
	memoryLimit     string
	gcMinHeadroom   string
	gcPacing        string
	gomaxprocs      string
	indexTurns      int
	otlpEndpoint    string
	authFile        string
	tlsCert         string
	tlsKey          string
	tlsClientCA     string
	gossipKeyB64    string
	maxInFlight     int
	tenantRate      float64
	tenantBurst     int
	clusterToken    string
	clockOffset     time.Duration

	embedProvider string
	embedURL      string
	embedModel    string
	embedAPIKey   string
	embedDir      string
	embedDim      int

	llmURL       string
	llmModel     string
	llmAPIKeyEnv string
	llmTimeout   time.Duration
	rerankURL    string
	rerankModel  string
	rerankKeyEnv string
	rerankTO     time.Duration
	rerankTop    int

	minFreeBytes    int64
	groupCommit     time.Duration
	compression     string
	compactNice     int
	overloadL0      int
	overloadWait    time.Duration
	overloadBacklog int64
	recordCache     string
	sessionWindow   int
	warmAfter       int
	confirmReads    bool
	coldStore       string
	sessionTTL      time.Duration
	sweepEvery      time.Duration
	tierEvery       time.Duration
	backupEvery     time.Duration
	backupTo        string
	backupKeep      int
}

func (c *config) register(fs *pflag.FlagSet) {
	fs.BoolVar(&c.version, "version", false, "print the version, the commit and the data formats of this build, then exit")
	fs.BoolVar(&c.dev, "dev", false, "single-node development mode: bootstrap alone, 1 replica per shard")
	fs.StringVar(&c.nodeID, "node-id", "", "unique node id (default: the host name)")
	fs.StringVar(&c.dataDir, "data-dir", "./memdata", "directory for the node's data")
	fs.StringVar(&c.httpAddr, "http-addr", "127.0.0.1:7480", "HTTP API listen and advertised address")
	fs.StringVar(&c.raftAddr, "raft-addr", "127.0.0.1:7481", "Raft listen and advertised address (one port for every shard)")
	fs.StringVar(&c.gossipAddr, "gossip-addr", "127.0.0.1:7482", "gossip (memberlist) bind and advertised address")
	fs.StringVar(&c.bindHost, "bind-host", "", "IP to listen on (0.0.0.0 in a container) with the ports of --http-addr, --raft-addr and --gossip-addr, which then only advertise and may be host names")
	fs.StringSliceVar(&c.join, "join", nil, "gossip addresses of existing members, host:port[,…]")
	fs.IntVar(&c.bootstrapExpect, "bootstrap-expect", 0, "form a new cluster once this many nodes see each other")
	fs.IntVar(&c.shards, "shards", 16, "number of shards (fixed when the cluster forms)")
	fs.IntVar(&c.replicas, "replicas", 3, "voters per shard, capped by live nodes")
	fs.DurationVar(&c.deadNodeTimeout, "dead-node-timeout", 60*time.Second, "how long a node may stay dead before its replicas are re-placed")
	fs.StringVar(&c.zone, "zone", "", "failure domain of this node (rack, room, availability zone): replicas of a shard go to distinct zones")
	fs.IntVar(&c.maxMoves, "rebalance-max-moves", 8, "replica moves under way at once in the whole cluster (rebalancing pace)")
	fs.IntVar(&c.movesPerNode, "rebalance-moves-per-node", 2, "replica moves one node takes part in at once")
	fs.Int64Var(&c.splitAbove, "split-above-memories", 0, "split a shard automatically once its leader holds more memory records than this (0: never; splits are then only by memctl shard split)")
	fs.DurationVar(&c.requestRetain, "request-retention", 24*time.Hour, "how long a shard keeps the result of a delete or forget for a retried request to find; shard leaders prune older ones (at least 1m)")
	fs.DurationVar(&c.raftHeartbeat, "raft-heartbeat-timeout", 0, "how long a follower waits without the leader before an election (0: the cluster default)")
	fs.DurationVar(&c.raftElection, "raft-election-timeout", 0, "how long a candidate waits for votes before trying again (0: the cluster default)")
	fs.DurationVar(&c.raftCommit, "raft-commit-timeout", 0, "how often an idle shard leader resends its commit index to followers (0: the cluster default, 500ms)")
	fs.BoolVar(&c.raftCoalesce, "raft-heartbeat-coalesce", false, "send the shard groups' heartbeats to each node in batches every 10ms (default off: one RPC per group, as plain hashicorp/raft)")
	fs.StringVar(&c.gossipProfile, "gossip-profile", "lan", "failure-detection timing: lan or local (fast, one host)")
	fs.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.logFormat, "log-format", "text", "text or json")
	fs.Int64Var(&c.maxBodyBytes, "max-body-bytes", 1<<20, "largest accepted request body")
	fs.StringVar(&c.otlpEndpoint, "otlp-endpoint", "", "send traces over OTLP/HTTP to this URL, e.g. http://127.0.0.1:4318 (OTEL_EXPORTER_OTLP_ENDPOINT works too)")
	fs.IntVar(&c.maxInFlight, "max-in-flight", 512, "concurrent API requests before new ones get 429 (after a 100ms wait)")
	fs.Float64Var(&c.tenantRate, "tenant-rate", 0, "requests/s allowed per tenant (token, or user_id without auth); 0 = unlimited")
	fs.IntVar(&c.tenantBurst, "tenant-burst", 0, "burst per tenant above --tenant-rate (default: the rate)")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "PEM certificate of this node: enables TLS on the API, the Raft port and node-to-node calls")
	fs.StringVar(&c.tlsKey, "tls-key", "", "PEM private key for --tls-cert")
	fs.StringVar(&c.tlsClientCA, "tls-client-ca", "", "PEM CA of the cluster: verifies peers (mutual TLS) and API client certificates")
	fs.StringVar(&c.gossipKeyB64, "gossip-key", "", "base64 key (16, 24 or 32 bytes) that encrypts gossip; the same on every node")
	fs.StringVar(&c.authFile, "auth-file", "", "JSON list of {token, role: reader|writer|admin, users: [patterns]}; enables authentication")
	fs.StringVar(&c.clusterToken, "cluster-token", "", "shared secret for node-to-node calls; required with --auth-file (same on every node)")
	fs.StringVar(&c.memoryLimit, "memory-limit", "auto", "soft limit of the Go heap, as GOMEMLIMIT writes it (e.g. 3GiB); auto: GOMEMLIMIT if set, else 90% of the container's (cgroup's) memory limit if there is one; off: none")
	fs.StringVar(&c.gcPacing, "gc-pacing", "auto", "auto: the garbage collector's headroom (GOGC) is sized to the heap without the vector rows and Pebble's buffers, which stay put between collections, and a heap idle for 10 s is collected and given back to the OS; off: GOGC as the runtime reads it")
	fs.StringVar(&c.gcMinHeadroom, "gc-min-headroom", "32MiB", "with --gc-pacing auto, the least the heap may grow between two collections (e.g. 64MiB), so a tiny heap taking writes is not collected back to back (a 256MiB floor was measured slower: docs/benchmarks.md); 0: none")
	fs.StringVar(&c.gomaxprocs, "gomaxprocs", "auto", "threads running Go code at once (Go's Ps): auto: GOMAXPROCS if set, else the cores (as the runtime counts them at start: the CPUs or a container's CPU limit, at least 2) plus one for each full-text indexing turn, whose lowered builds then leave the write path every core (the runtime then no longer follows a changed CPU limit); runtime: the runtime's own, following the limit; or a count")
	fs.IntVar(&c.indexTurns, "index-turns", 0, "full-text batches the node's replicas build at once, each on a thread of lower priority, and vector checkpoints they write (0: half the cores, at least 1)")
	fs.BoolVar(&c.pprof, "pprof", false, "serve Go profiles under /debug/pprof/ on the HTTP port")
	fs.StringVar(&c.embedProvider, "embed-provider", "hashed", "embedder: hashed (built in, no weights), openai (any OpenAI-compatible server) or model2vec")
	fs.StringVar(&c.embedURL, "embed-url", "", "base URL of the OpenAI-compatible embeddings API, e.g. http://127.0.0.1:11434/v1")
	fs.StringVar(&c.embedModel, "embed-model", "", "embedding model name for the openai provider")
	fs.StringVar(&c.embedAPIKey, "embed-api-key", "", "API key for the openai provider")
	fs.StringVar(&c.embedDir, "embed-dir", "", "directory of a Model2Vec model (model.safetensors, tokenizer.json)")
	fs.IntVar(&c.embedDim, "embed-dim", 0, "vector dimension (hashed: default 256; openai: learned when 0)")
	fs.StringVar(&c.llmURL, "llm-url", "", "base URL of an OpenAI-compatible chat API for fact extraction, e.g. http://localhost:11434/v1; empty: rules only")
	fs.StringVar(&c.llmModel, "llm-model", "", "chat model for --llm-url")
	// The key's name, not the key: a flag value shows in ps and shell history.
	fs.StringVar(&c.llmAPIKeyEnv, "llm-api-key-env", "OPENAI_API_KEY", "name of the environment variable that holds the --llm-url API key")
	fs.DurationVar(&c.llmTimeout, "llm-timeout", 10*time.Second, "time budget per message for LLM extraction, retries included; then the rules answer")
	fs.StringVar(&c.rerankURL, "rerank-url", "", "rerank endpoint for the default search mode: TEI's …/rerank or Cohere/Jina's …/v1/rerank; empty: no reranking")
	fs.StringVar(&c.rerankModel, "rerank-model", "", "rerank model sent to a …/v1/rerank endpoint")
	fs.StringVar(&c.rerankKeyEnv, "rerank-api-key-env", "RERANK_API_KEY", "name of the environment variable that holds the --rerank-url API key")
	fs.DurationVar(&c.rerankTO, "rerank-timeout", 2*time.Second, "time budget of one rerank call; then the search keeps its own order")
	fs.IntVar(&c.rerankTop, "rerank-candidates", 30, "best results of a search sent to --rerank-url")
	fs.StringVar(&c.recordCache, "record-cache", "32MiB", "memory for records' bytes read by searches and gets, so that they cost the same however much the node holds (e.g. 64MiB); off: none")
	fs.Int64Var(&c.minFreeBytes, "min-free-bytes", 256<<20, "free disk space below which the node turns read-only (writes get 507, reads go on); negative: off")
	fs.DurationVar(&c.groupCommit, "group-commit-interval", storage.DefaultWALMinSyncInterval, "while the node's WAL syncs each cover several raft entries (many writers), hold a sync this long after the last so that more appends share it; a lone writer's syncs are not held once that average settles; 0: off (up to 50ms)")
	fs.IntVar(&c.compactNice, "compaction-nice", 10, "nice values below the node's priority at which its Pebble compactions run, each on a thread of its own (Linux); 0: at the node's priority")
	fs.IntVar(&c.overloadL0, "overload-sublevels", 10, "level-0 sublevels of the node's Pebble at which it holds new writes until its compactions catch up (Pebble stops every write at 12); 0: never")
	fs.Int64Var(&c.overloadBacklog, "overload-backlog", 200_000, "changes waiting for the node's full-text indexes (each held in memory) at which it holds new writes until the backlog is back at three quarters, as for --overload-sublevels; 0: never (and never with --overload-sublevels 0)")
	fs.DurationVar(&c.overloadWait, "overload-wait", time.Second, "how long a write waits for an overloaded node's storage before it is refused with 503 overloaded (and Retry-After)")
	fs.StringVar(&c.compression, "storage-compression", storage.DefaultCompression, "how the node's Pebble tables are compressed: last-level (snappy in the tables compactions write into the last level, where data comes to rest; none in flushes and the compactions above: less CPU a write, more disk), none, or snappy (every table); tables written before stay readable")
	fs.StringVar(&c.coldStore, "cold-store", "", "keep cold segments in this object store instead of the shards: s3://bucket?region=…&endpoint=…, or file:///dir that every node shares")
	fs.BoolVar(&c.confirmReads, "confirm-txn-reads", false, "confirm the reads of appends, flushes and remembers with a quorum before they decide; off: their commit, conditional on the user's revision, catches a stale read")
	fs.IntVar(&c.warmAfter, "warm-restore-after", 3, "escalated reads of an archive entry that bring its memories back to the hot tier (0: never)")
	fs.IntVar(&c.sessionWindow, "session-window", 20, "working memory: messages kept verbatim per session; the oldest half folds into the summary")
	fs.DurationVar(&c.sessionTTL, "session-ttl", time.Hour, "working memory: a session idle this long is consolidated and ended")
	fs.DurationVar(&c.sweepEvery, "session-sweep", time.Minute, "how often shard leaders look for idle sessions")
	fs.DurationVar(&c.tierEvery, "tier-every", time.Hour, "how often shard leaders move aged memories to cold segments; 0: only on `memctl tier run`")
	fs.DurationVar(&c.backupEvery, "backup-every", 0, "take a backup of the whole cluster this often (on the meta leader); 0: never")
	fs.StringVar(&c.backupTo, "backup-to", "", "where scheduled backups go: a directory, file:///dir or s3://bucket/prefix?region=…")
	fs.IntVar(&c.backupKeep, "backup-keep", 7, "scheduled backups kept in --backup-to; older ones are deleted (0: keep all)")
	// Hidden: a fault-injection knob. The chaos campaign restarts a node with a different offset, which is how a
	// clock step looks to the process; Raft timing uses the monotonic clock and is not affected.
	fs.DurationVar(&c.clockOffset, "clock-offset", 0, "testing: shift the wall clock the API uses for ids and timestamps")
	_ = fs.MarkHidden("clock-offset")
}

// applyEnv sets every flag not given on the command line from MEMNODE_<NAME>, e.g. MEMNODE_HTTP_ADDR.
func applyEnv(cmd *cobra.Command, env func(string) string) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Changed || err != nil || f.Name == "version" || f.Name == "help" {
			return
		}
		name := "MEMNODE_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := env(name); v != "" {
			if serr := cmd.Flags().Set(f.Name, v); serr != nil {
				err = fmt.Errorf("%s=%q: %w", name, v, serr)
			}
		}
	})
	return err
}

// finish applies --dev and derived defaults, and checks flags against each other.
func (c *config) finish() error {
	if c.nodeID == "" {
		h, err := os.Hostname()
		if err != nil || h == "" {
			return fmt.Errorf("--node-id: not given and the host name is unknown")
		}
		c.nodeID = h
	}
	if c.requestRetain < cluster.MinRequestRetention {
		return fmt.Errorf("--request-retention %v: must be at least %v (a retried delete must still find its first result)", c.requestRetain, cluster.MinRequestRetention)
	}
	if c.warmAfter < 0 {
		return fmt.Errorf("--warm-restore-after %d: must be 0 (never) or more", c.warmAfter)
	}
	if c.memoryLimit != "auto" && c.memoryLimit != "off" {
		if _, err := parseBytes(c.memoryLimit); err != nil {
			return fmt.Errorf("--memory-limit %q: %w", c.memoryLimit, err)
		}
	}
	if _, err := c.recordCacheBytes(); err != nil {
		return err
	}
	if c.groupCommit < 0 || c.groupCommit > maxGroupCommit {
		return fmt.Errorf("--group-commit-interval %v: want 0 (off) up to %v", c.groupCommit, maxGroupCommit)
	}
	if !storage.ValidCompression(c.compression) {
		return fmt.Errorf("--storage-compression %q: want one of %s", c.compression, strings.Join(storage.Compressions(), ", "))
	}
	if c.indexTurns < 0 || c.indexTurns > runtime.NumCPU() {
		return fmt.Errorf("--index-turns %d: want 0 (half the cores) up to the %d cores", c.indexTurns, runtime.NumCPU())
	}
	if c.gomaxprocs != "auto" && c.gomaxprocs != "runtime" {
		if _, err := parseProcs(c.gomaxprocs); err != nil {
			return err
		}
	}
	if c.gcPacing != "auto" && c.gcPacing != "off" {
		return fmt.Errorf("--gc-pacing %q: want auto or off", c.gcPacing)
	}
	if c.compactNice < 0 || c.compactNice > 19 {
		return fmt.Errorf("--compaction-nice %d: want 0 to 19", c.compactNice)
	}
	if c.overloadL0 < 0 || c.overloadL0 > 11 {
		return fmt.Errorf("--overload-sublevels %d: want 0 (never) to 11 (Pebble stops writes at 12)", c.overloadL0)
	}
	if c.overloadBacklog < 0 {
		return fmt.Errorf("--overload-backlog %d: want 0 (never) or a count of changes", c.overloadBacklog)
	}
	if c.overloadWait <= 0 || c.overloadWait > time.Minute {
		return fmt.Errorf("--overload-wait %s: want more than 0 and at most 1m", c.overloadWait)
	}
	if _, err := c.minHeadroom(); err != nil {
		return err
	}
	if c.dev {
		if len(c.join) > 0 {
			return fmt.Errorf("--dev runs a single node: drop --join")
		}
		c.bootstrapExpect, c.replicas, c.gossipProfile = 1, 1, "local"
	}
	return nil
}

// maxGroupCommit bounds --group-commit-interval: every synced write under load may wait this long.
const maxGroupCommit = 50 * time.Millisecond

// storageOptions is the node's storage.Options as its (validated) flags set them.
func (c *config) storageOptions(log *slog.Logger) storage.Options {
	recordCache, _ := c.recordCacheBytes() // validated with the flags
	return storage.Options{Logger: log, MinFreeBytes: c.minFreeBytes, RecordCacheSize: recordCache,
		WALMinSyncInterval: c.walMinSyncInterval(), Compression: c.compression,
		CompactionNicer: c.compactNice, OverloadSublevels: c.overloadSublevels()}
}

// overloadSublevels is --overload-sublevels as storage.Options.OverloadSublevels: negative for never.
func (c *config) overloadSublevels() int {
	if c.overloadL0 == 0 {
		return -1
	}
	return c.overloadL0
}

// walMinSyncInterval is --group-commit-interval as storage.Options.WALMinSyncInterval: negative for off.
func (c *config) walMinSyncInterval() time.Duration {
	if c.groupCommit == 0 {
		return -1
	}
	return c.groupCommit
}

// recordCacheBytes is --record-cache as storage.Options.RecordCacheSize: negative for off.
func (c *config) recordCacheBytes() (int64, error) {
	if c.recordCache == "off" {
		return -1, nil
	}
	n, err := parseBytes(c.recordCache)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("--record-cache %q: want a size such as 32MiB, or off", c.recordCache)
	}
	return n, nil
}
