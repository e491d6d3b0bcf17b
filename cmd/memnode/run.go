package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"

	mcpadapter "github.com/memcluster/memcluster/adapters/mcp"
	"github.com/memcluster/memcluster/cluster"
	"github.com/memcluster/memcluster/consolidation"
	"github.com/memcluster/memcluster/embed"
	"github.com/memcluster/memcluster/fulltext"
	"github.com/memcluster/memcluster/internal/buildinfo"
	"github.com/memcluster/memcluster/internal/nodeindex"
	"github.com/memcluster/memcluster/reembed"
	"github.com/memcluster/memcluster/retrieval"
	"github.com/memcluster/memcluster/server"
	"github.com/memcluster/memcluster/storage"
	"github.com/memcluster/memcluster/tiering"
	"github.com/memcluster/memcluster/vector"
)

func newRootCmd() *cobra.Command {
	var c config
	cmd := &cobra.Command{
		Use:           "memnode",
		Short:         "Run a memcluster node",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if c.version {
				return buildinfo.Write(cmd.OutOrStdout(), "memnode", buildinfo.Get())
			}
			if err := applyEnv(cmd, os.Getenv); err != nil {
				return err
			}
			if err := c.finish(); err != nil {
				return err
			}
			return run(cmd.Context(), c, os.Stderr)
		},
	}
	c.register(cmd.Flags())
	return cmd
}

func newLogger(c config, w io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch c.logFormat {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format: want text or json, got %q", c.logFormat)
}

// run wires the node's parts together — the one place that does — and serves until SIGINT/SIGTERM.
func run(ctx context.Context, c config, logw io.Writer) error {
	log, err := newLogger(c, logw)
	if err != nil {
		return err
	}
	if err := applyMemoryLimit(c.memoryLimit, log); err != nil {
		return err
	}
	turns, err := applyProcs(c.gomaxprocs, c.indexTurns, log)
	if err != nil {
		return err
	}
	otel.SetTextMapPropagator(propagation.TraceContext{})
	tp, shutdownTracing, err := newTracerProvider(ctx, c, os.Getenv)
	if err != nil {
		return err
	}
	defer shutdownTracing(context.Background())
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	var auth *server.Auth
	if c.authFile != "" {
		if auth, err = server.LoadAuthFile(c.authFile, c.clusterToken); err != nil {
			return fmt.Errorf("--auth-file: %w", err)
		}
	} else if c.clusterToken != "" {
		return fmt.Errorf("--cluster-token needs --auth-file (without it the API is open)")
	}
	apiTLS, nodeTLS, err := tlsConfigs(c)
	if err != nil {
		return err
	}
	gkey, err := gossipKey(c.gossipKeyB64)
	if err != nil {
		return err
	}
	emb, err := newEmbedder(ctx, c)
	if err != nil {
		return err
	}
	extract, err := newExtractor(c, os.Getenv, log, reg)
	if err != nil {
		return err
	}
	rerank, err := newReranker(c, os.Getenv, log, reg)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.dataDir, 0o755); err != nil {
		return fmt.Errorf("--data-dir: %w", err)
	}
	db, err := storage.Open(filepath.Join(c.dataDir, "pebble"), c.storageOptions(log))
	if err != nil {
		return err
	}
	closeDB := true
	defer func() {
		if closeDB {
			db.Close()
		}
	}()
	registerDiskStats(reg, db)

	httpLn, err := net.Listen("tcp", cluster.ListenAddr(c.bindHost, c.httpAddr))
	if err != nil {
		return fmt.Errorf("listen http %s: %w", cluster.ListenAddr(c.bindHost, c.httpAddr), err)
	}
	// The rows and full-text caches of every shard index here, for the collector's pacing and the metrics.
	meters := nodeindex.Meters{Vectors: vector.NewMeter(), Text: fulltext.NewMeter()}
	registerTextCaches(reg, meters.Text)
	indexers := retrieval.NewIndexers(turns)
	registerIndexers(reg, indexers)
	db.SetBacklog("changes for the full-text indexes", indexers.Backlog, c.overloadBacklog)
	node, err := cluster.New(cluster.Config{
		NodeID: c.nodeID, DataDir: c.dataDir, RaftAddr: c.raftAddr, GossipAddr: c.gossipAddr, HTTPAddr: c.httpAddr, BindHost: c.bindHost,
		Join: c.join, BootstrapExpect: c.bootstrapExpect, Shards: c.shards, Replicas: c.replicas,
		DeadNodeTimeout: c.deadNodeTimeout, Zone: c.zone, MaxMoves: c.maxMoves, MovesPerNode: c.movesPerNode, SplitAboveMemories: c.splitAbove, RequestRetention: c.requestRetain,
		HeartbeatTimeout: c.raftHeartbeat, ElectionTimeout: c.raftElection,
		ShardCommitTimeout: c.raftCommit, HeartbeatCoalesce: c.raftCoalesce, GossipProfile: c.gossipProfile, Logger: log, Registry: reg,
		Tracer: tp.Tracer("memcluster/cluster"), ClusterToken: c.clusterToken, OverloadWait: c.overloadWait,
		TLS: nodeTLS, GossipKey: gkey,
	}, db, nodeindex.Factory(c.dataDir, db, emb, meters, indexers, log))
	if err != nil {
		return err
	}
	if err := node.Start(); err != nil {
		return err
	}
	jobCtx, stopJobs := context.WithCancel(context.Background())
	defer stopJobs()
	minHeadroom, _ := c.minHeadroom() // checked with the other flags
	if err := startGCPacing(jobCtx, c.gcPacing, minHeadroom, meters, db.HeapBytes, reg, log); err != nil {
		return err
	}
	go reembed.New(node, db, emb, reembed.Options{Logger: log, Registry: reg}).Run(jobCtx)
	model := consolidation.Options{Working: consolidation.WorkingOptions{MaxMessages: c.sessionWindow, IdleTTL: c.sessionTTL}}
	if err := model.Validate(); err != nil {
		return fmt.Errorf("--session-window or --session-ttl: %w", err)
	}
	sched := server.BackupSchedule{Every: c.backupEvery, To: c.backupTo, Keep: c.backupKeep, Leader: node.IsMetaLeader}
	if err := sched.Validate(); err != nil {
		return err
	}
	var cold server.ColdStore
	if c.coldStore != "" {
		bs, err := tiering.OpenBlobStore(ctx, c.coldStore)
		if err != nil {
			return fmt.Errorf("--cold-store: %w", err)
		}
		defer bs.Close()
		cold = bs
	}
	api := server.New(node, emb, server.Options{MaxBodyBytes: c.maxBodyBytes, Logger: log, Registry: reg, Pprof: c.pprof, Auth: auth, MaxInFlight: c.maxInFlight, NodeCerts: nodeTLS != nil,
		TenantRate: c.tenantRate, TenantBurst: c.tenantBurst, Now: offsetClock(c.clockOffset),
		Tracer: tp.Tracer("memcluster/server"), Extract: extract, Rerank: rerank, RerankCandidates: c.rerankTop, Model: model, WarmRestoreAfter: warmRestoreAfter(c.warmAfter), ColdStore: cold,
		ConfirmTxnReads: c.confirmReads})
	mcpHandler, err := mcpadapter.NewHTTPHandler(mcpadapter.HTTPOptions{API: api, Version: buildinfo.Get().Version,
		MaxBodyBytes: c.maxBodyBytes, Logger: log})
	if err != nil {
		return err
	}
	api.Mount("/mcp", mcpHandler)
	go api.RunIdleSweeper(jobCtx, node, c.sweepEvery)
	go api.RunCompactor(jobCtx, node, c.tierEvery)
	go api.RunBackups(jobCtx, sched)
	handler, err := withAdapters(api, log)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 2 * time.Minute, TLSConfig: apiTLS}
	errc := make(chan error, 1)
	go func() {
		if apiTLS != nil {
			errc <- srv.ServeTLS(httpLn, "", "")
			return
		}
		errc <- srv.Serve(httpLn)
	}()
	log.Info("memnode serving", "http", c.httpAddr, "node", c.nodeID, "data_dir", c.dataDir, "embedder", emb.Fingerprint())
	if c.dev {
		printDevHint(logw, c)
	}
	err = waitAndStop(ctx, srv, node, errc, log)
	// A replica still applying would meet a closed store and panic; the process ends as after a crash, which the
	// store and the raft logs recover from at the next start.
	closeDB = !errors.Is(err, errStopTimedOut)
	return err
}

// errStopTimedOut: the node's stop outlived stopTimeout; memnode exits without closing its store.
var errStopTimedOut = fmt.Errorf("node stop took longer than %v; exited without closing the store (the next start recovers it as after a crash)", stopTimeout)

// stopTimeout bounds the node's stop once the API has shut down.
const stopTimeout = 20 * time.Second

// offsetClock is the wall clock shifted by --clock-offset (0: time.Now itself). Only the API's decisions — ids,
// created_at, the default occurred_at, search recency — read it; ids are fixed before a command is proposed, so
// replicas never consult a clock.
// warmRestoreAfter maps the flag (0: never) onto server.Options (0: the default, negative: never).
func warmRestoreAfter(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

func offsetClock(d time.Duration) func() time.Time {
	if d == 0 {
		return time.Now
	}
	return func() time.Time { return time.Now().Add(d) }
}

func waitAndStop(ctx context.Context, srv *http.Server, node *cluster.Node, errc chan error, log *slog.Logger) error {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	var err error
	select {
	case s := <-sig:
		log.Info("shutting down", "signal", s.String())
	case err = <-errc:
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	// Bounded: a stop that hangs must not keep the process alive; what is acknowledged is already durable.
	stopped := make(chan error, 1)
	go func() { stopped <- node.Stop() }()
	select {
	case serr := <-stopped:
		if serr != nil {
			log.Warn("node stop", "err", serr)
		}
	case <-time.After(stopTimeout):
		log.Error(errStopTimedOut.Error())
		return errStopTimedOut
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func newEmbedder(ctx context.Context, c config) (embed.Embedder, error) {
	emb, err := embed.New(embed.Options{Provider: c.embedProvider, URL: c.embedURL, Model: c.embedModel,
		APIKey: c.embedAPIKey, Dir: c.embedDir, Dim: c.embedDim})
	if err != nil {
		return nil, fmt.Errorf("embedder: %w", err)
	}
	if emb.Dim() == 0 {
		// A remote model's dimension is learned from its first answer; the vector indexes need it now.
		if _, err := emb.Embed(ctx, []string{"dimension probe"}); err != nil {
			return nil, fmt.Errorf("embedder: probe %s: %w", c.embedURL, err)
		}
	}
	return emb, nil
}

// indexFactory opens a shard replica's indexes: vectors in memory, bleve under data-dir/index/shard-N.
func printDevHint(w io.Writer, c config) {
	fmt.Fprintf(w, `
memnode is running (dev mode, data in %s). Try:

  ./bin/memctl put --user alice "I prefer morning flights"
  ./bin/memctl search --user alice "when do I like to fly?"
  ./bin/memctl cluster status

Stop with Ctrl-C.
`, c.dataDir)
}
