package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"reflect"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/backup"
	"github.com/memcluster/memcluster/cluster"
	"github.com/memcluster/memcluster/consolidation"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/retrieval"
	"github.com/memcluster/memcluster/storage"
)

// Cluster is what the API needs of the node's cluster membership.
type Cluster interface {
	ShardFor(ctx context.Context, user string) (uint32, error)
	// LeaderURL is the API address of the node known to lead shard, or "" (apiv1.HeaderShardLeader).
	LeaderURL(shard uint32) string
	Propose(ctx context.Context, shard uint32, cmd []byte) (storage.ApplyResult, error)
	// RecordFormat is the memory record format the commands proposed write: the newest every member reads.
	RecordFormat() storage.RecordFormat
	// CommandFormat is the raft command format the user transactions proposed are in: the newest every member
	// reads.
	CommandFormat() storage.CommandFormat
	Search(ctx context.Context, shard uint32, q retrieval.Query, stale bool) ([]retrieval.Result, error)
	// SearchAll fans a query across users out to every shard, each under its own deadline, naming the shards
	// that did not answer.
	SearchAll(ctx context.Context, q retrieval.Query, stale bool, perShard time.Duration) ([]retrieval.Result, []apiv1.ShardFailure, error)
	Get(ctx context.Context, shard uint32, user, id string, stale bool) (memory.Memory, error)
	// ShardCount is the cluster's number of shards; ShardUsers lists the users with memories in one.
	ShardCount(ctx context.Context) (int, error)
	ShardUsers(ctx context.Context, shard uint32, stale bool) ([]string, error)
	// ReadSide and Recent read a user's side state and newest memories for the memory model.
	ReadSide(ctx context.Context, shard uint32, space byte, user, prefix string, limit int, stale bool) (storage.SideRead, error)
	Recent(ctx context.Context, shard uint32, user string, types []memory.Type, limit int, stale bool) ([]memory.Memory, error)
	// List and ReadSideAfter page through a user's memories (filtered) and side records, after a key.
	List(ctx context.Context, shard uint32, user, after string, limit int, f storage.ListFilter, stale bool) (storage.ListPage, error)
	ReadSideAfter(ctx context.Context, shard uint32, space byte, user, after string, limit int, stale bool) (storage.SideRead, error)
	Status(ctx context.Context) apiv1.ClusterStatus
	// Operator actions: drain (cluster.NodeDraining), undrain ("") or remove (cluster.NodeRemoved) a member;
	// pause or resume rebalancing; move a shard's leadership.
	SetNodeState(ctx context.Context, id, state string, force bool) (apiv1.NodeStateResponse, error)
	SetPaused(ctx context.Context, paused bool) error
	TransferLeader(ctx context.Context, shard uint32, to string) error
	SplitShard(ctx context.Context, shard uint32, wait bool) (apiv1.SplitResponse, error)
	// Backup streams a backup of the whole cluster to w; Restore installs one (backup.go).
	Backup(ctx context.Context, w io.Writer, o cluster.BackupOptions) (backup.Summary, error)
	Restore(ctx context.Context, r io.Reader, o cluster.RestoreOptions) (apiv1.BackupRestoreResponse, error)
	Ready() (bool, string)
	InternalHandler() http.Handler
}

// Embedder is what the API needs of an embedding provider.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Fingerprint() string
	Dim() int
}

// Options configures the API. Zero fields take the defaults stated.
type Options struct {
	MaxBodyBytes   int64         // default 1 MiB
	RequestTimeout time.Duration // default 15s
	Limits         memory.Limits // default memory.DefaultLimits
	Logger         *slog.Logger  // default slog.Default()
	Registry       *prometheus.Registry
	Tracer         trace.Tracer // default the global provider's "memcluster/server"
	Now            func() time.Time
	// Pprof mounts net/http/pprof under /debug/pprof/ (off by default: it exposes internals).
	Pprof bool
	// Auth, when set, requires bearer tokens on /v1 and the cluster token on /internal; nil allows everything.
	Auth *Auth
	// MaxInFlight bounds concurrently served /v1 requests (default 512). A request that finds no slot within
	// QueueWait (default 100ms) is answered 429 with Retry-After: the node sheds load instead of queueing
	// without bound.
	MaxInFlight int
	QueueWait   time.Duration
	// TenantRate limits each tenant (token, or user_id without authentication) to this many requests per
	// second with TenantBurst (default: the rate) in reserve; 0 turns it off. Over it: 429 with Retry-After.
	TenantRate  float64
	TenantBurst int
	// Model configures consolidation (windows, segmentation, fact policy, patterns, anomalies); the zero value
	// takes every default of package consolidation.
	Model consolidation.Options
	// Extract, when set, replaces the rule-based fact extraction (an LLM provider, say). It runs on the node
	// that receives the request, before proposing, so replicas only apply its decided output; it must fall back
	// to consolidation.Extract itself when its provider fails or answers malformed output.
	Extract consolidation.ExtractFunc
	// ColdStore, when set, holds cold segments outside the shards (an object store every node reaches); the
	// shards keep pointers. Nil: segments are replicated inside the shard keyspace.
	ColdStore ColdStore
	// WarmRestoreAfter is how many escalated reads of an archive entry bring its memories back to the hot
	// tier (default 3); negative: never (reads are then not recorded either).
	WarmRestoreAfter int
	// Rerank, when set, reorders the top RerankCandidates results of a pipeline search for one user (the
	// default mode) by its scores; when it cannot answer, the pipeline's order stands (it logs and counts why).
	Rerank Reranker
	// RerankCandidates is how many of the best pipeline results are sent to Rerank; default 30.
	RerankCandidates int
	// ConfirmTxnReads confirms every read of a memory-model transaction with a quorum (the read-index protocol)
	// before it decides. Off by default: a transaction that reads only side records (append, flush, remember)
	// commits only if the user's revision it read is still current, so its first decision reads the leader's
	// applied state unconfirmed and a stale read conflicts.
	ConfirmTxnReads bool
	// NodeCerts requires a verified client certificate (the cluster CA's) on the internal API: node-to-node
	// calls are mutual TLS.
	NodeCerts bool
}

func (o Options) withDefaults() Options {
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = 15 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
	if o.Tracer == nil {
		o.Tracer = otel.GetTracerProvider().Tracer("memcluster/server")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxInFlight == 0 {
		o.MaxInFlight = 512
	}
	if o.WarmRestoreAfter == 0 {
		o.WarmRestoreAfter = 3
	}
	if o.RerankCandidates <= 0 {
		o.RerankCandidates = 30
	}
	if o.QueueWait == 0 {
		o.QueueWait = 100 * time.Millisecond
	}
	return o
}

// Server serves /v1, health, metrics and the internal node-to-node API.
type Server struct {
	c       Cluster
	emb     Embedder
	ids     *memory.IDSource
	opts    Options
	log     *slog.Logger
	metrics *metrics
	mux     *http.ServeMux
	slots   chan struct{}
	limits  *tenantLimits
	// endpoints is the route table, in registration order (Routes); patterns is every pattern the mux
	// serves, in registration order (Patterns).
	endpoints []endpoint
	bodies    []reflect.Type // endpoints[i] decodes bodies[i] (noFields: none)
	patterns  []string
	// describers add the paths of adapters mounted in front of the API to its document (Describe).
	describers []func(*openapi3.T)
	doc        docCache
}

// New returns the API of one node.
func New(c Cluster, emb Embedder, opts Options) *Server {
	opts = opts.withDefaults()
	s := &Server{c: c, emb: emb, ids: memory.NewIDSource(), opts: opts, log: opts.Logger,
		metrics: newMetrics(opts.Registry), mux: http.NewServeMux(), slots: make(chan struct{}, opts.MaxInFlight),
		limits: newTenantLimits(opts.TenantRate, opts.TenantBurst)}
	s.routeV1()
	s.routeAdmin()
	s.routeBackup()
	s.handleFunc("GET "+apiv1.PathOpenAPI, s.handleOpenAPI)
	s.handleFunc("GET "+apiv1.PathHealthz, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	s.handleFunc("GET "+apiv1.PathReadyz, s.handleReady)
	s.register("GET "+apiv1.PathMetrics, promhttp.HandlerFor(opts.Registry, promhttp.HandlerOpts{}))
	s.register("/internal/v1/", requireNodeCert(opts.NodeCerts, opts.Auth.internal(c.InternalHandler())))
	if opts.Pprof {
		// Profiles reveal internals and cost CPU: with authentication on, an admin token only.
		s.register("/debug/pprof/", s.adminOnly("pprof", pprof.Index))
		s.register("/debug/pprof/profile", s.adminOnly("pprof", pprof.Profile))
		s.register("/debug/pprof/trace", s.adminOnly("pprof", pprof.Trace))
	}
	return s
}

// ServeHTTP implements http.Handler. A request no route takes is answered in JSON: 405 with Allow when the
// path is known under other methods, else 404.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, pattern := s.mux.Handler(r)
	if pattern != "" {
		s.mux.ServeHTTP(w, r)
		return
	}
	rec := &headerRecorder{header: http.Header{}}
	h.ServeHTTP(rec, r) // the mux's own answer: 404, or 405 with the Allow header it computed
	if rec.code == http.StatusMethodNotAllowed {
		allow := rec.header.Get("Allow")
		w.Header().Set("Allow", allow)
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed",
			fmt.Sprintf("%s %s: method not allowed (allowed: %s)", r.Method, r.URL.Path, allow), "")
		return
	}
	if rec.code != 0 && rec.code != http.StatusNotFound {
		// A redirect (a path to clean): let the mux answer it.
		s.mux.ServeHTTP(w, r)
		return
	}
	writeError(w, http.StatusNotFound, "not_found", "no route for "+r.Method+" "+r.URL.Path, "")
}

// register adds a pattern to the mux: every route goes through here (or handleFunc), so Patterns lists all.
func (s *Server) register(pattern string, h http.Handler) {
	s.patterns = append(s.patterns, pattern)
	s.mux.Handle(pattern, h)
}

func (s *Server) handleFunc(pattern string, h http.HandlerFunc) { s.register(pattern, h) }

// Patterns lists every pattern the node's mux serves, in registration order.
func (s *Server) Patterns() []string { return append([]string(nil), s.patterns...) }

// headerRecorder keeps the status and headers of an answer and drops its body.
type headerRecorder struct {
	header http.Header
	code   int
}

func (h *headerRecorder) Header() http.Header         { return h.header }
func (h *headerRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (h *headerRecorder) WriteHeader(code int)        { h.code = code }

// adminOnly guards an operator endpoint outside /v1 with an admin token (open when authentication is off).
func (s *Server) adminOnly(name string, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, ok := s.authenticate(w, r, RoleAdmin, name); ok {
			s.log.Info("audit", "op", name, "principal", p.name, "path", r.URL.Path, "remote", r.RemoteAddr)
			h(w, r)
		}
	})
}

// acquire takes an in-flight slot, waiting at most QueueWait.
func (s *Server) acquire(ctx context.Context) bool {
	select {
	case s.slots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(s.opts.QueueWait)
	defer t.Stop()
	select {
	case s.slots <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

func (s *Server) handleReady(w http.ResponseWriter, _ *http.Request) {
	if ok, why := s.c.Ready(); !ok {
		writeError(w, http.StatusServiceUnavailable, "unavailable", why, "")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

// Unwrap lets http.ResponseController reach the connection (streamed routes lift its deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}
