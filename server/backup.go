package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/backup"
	"github.com/memcluster/memcluster/cluster"
)

// Backups: GET /v1/backup streams one (the backup package's format) and POST /v1/backup/restore takes one.
// Both are admin routes over streams; the external cold store, when configured, is included (or, with
// ?cold=refs, referenced) and restored.

func (s *Server) routeBackup() {
	handle(s, endpoint{"GET", apiv1.PathBackup, "backup", RoleAdmin, userNone, bodyStream}, noTenant[noFields],
		func(w http.ResponseWriter, r *http.Request, _ *decoded[noFields]) { s.handleBackup(w, r) })
	handle(s, endpoint{"POST", apiv1.PathRestore, "restore", RoleAdmin, userNone, bodyStream}, noTenant[noFields],
		func(w http.ResponseWriter, r *http.Request, _ *decoded[noFields]) { s.handleRestore(w, r) })
}

func (s *Server) backupOptions(refs bool) cluster.BackupOptions {
	o := cluster.BackupOptions{ColdRefs: refs}
	if s.opts.ColdStore != nil {
		o.Cold = s.opts.ColdStore
	}
	return o
}

func (s *Server) handleBackup(w http.ResponseWriter, r *http.Request) {
	cold := r.URL.Query().Get("cold")
	if cold != "" && cold != "refs" && cold != "include" {
		writeError(w, http.StatusBadRequest, "invalid_argument", "cold: include (the default) or refs", "cold")
		return
	}
	lw := &lazyWriter{w: w}
	sum, err := s.c.Backup(r.Context(), lw, s.backupOptions(cold == "refs"))
	switch {
	case err != nil && !lw.started:
		s.fail(w, r, err)
	case err != nil:
		// The client has a 200 and part of a file: break the stream so it can never pass for a whole one.
		s.log.Error("backup failed while streaming", "err", err)
		panic(http.ErrAbortHandler)
	default:
		s.log.Info("backup streamed", "shards", sum.Shards, "memories", sum.Memories, "bytes", sum.Bytes)
	}
}

// lazyWriter sends the 200 with the first byte, so an error before it can still be a JSON answer.
type lazyWriter struct {
	w       http.ResponseWriter
	started bool
}

func (l *lazyWriter) Write(p []byte) (int, error) {
	if !l.started {
		l.started = true
		l.w.Header().Set("Content-Type", "application/octet-stream")
		l.w.WriteHeader(http.StatusOK)
	}
	return l.w.Write(p)
}

func (s *Server) handleRestore(w http.ResponseWriter, r *http.Request) {
	force, ok := boolParam(w, r, "force")
	if !ok {
		return
	}
	o := cluster.RestoreOptions{Force: force}
	if s.opts.ColdStore != nil {
		o.Cold = s.opts.ColdStore
	}
	res, err := s.c.Restore(r.Context(), r.Body, o)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("audit", "op", "restore", "principal", principalOf(r.Context()).name, "shards", res.Shards,
		"memories", res.Memories, "force", force)
	writeJSON(w, http.StatusOK, res)
}

// BackupSchedule configures RunBackups.
type BackupSchedule struct {
	Every time.Duration // 0: no scheduled backups
	To    string        // directory location: a path, file:///dir or s3://bucket/prefix?…
	Keep  int           // backups kept in To (older ones are deleted); 0 keeps all
	// Leader reports whether this node leads the meta group: only the meta leader takes scheduled backups.
	Leader func() bool
}

// Validate checks a schedule (the zero one is valid: off).
func (b BackupSchedule) Validate() error {
	switch {
	case b.Every < 0 || b.Keep < 0:
		return errors.New("backup schedule: --backup-every and --backup-keep must not be negative")
	case b.Every > 0 && b.To == "":
		return errors.New("backup schedule: --backup-every needs --backup-to")
	case b.Every > 0 && b.Leader == nil:
		return errors.New("backup schedule: no leader check")
	}
	return nil
}

type backupMetrics struct {
	runs    *prometheus.CounterVec
	bytes   prometheus.Counter
	seconds prometheus.Histogram
}

func newBackupMetrics(reg prometheus.Registerer) *backupMetrics {
	m := &backupMetrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memcluster_backups_total",
			Help: "Scheduled backups by outcome (success, failure)."}, []string{"outcome"}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "memcluster_backup_bytes_total",
			Help: "Bytes of shard and cold segment data written by scheduled backups."}),
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "memcluster_backup_seconds",
			Help: "Duration of scheduled backups.", Buckets: prometheus.ExponentialBuckets(0.5, 2, 14)}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.runs, m.bytes, m.seconds} {
			_ = reg.Register(c)
		}
	}
	return m
}

// RunBackups takes a backup every b.Every while this node leads the meta group, writes it to b.To and prunes
// all but the newest b.Keep. It returns when ctx ends.
func (s *Server) RunBackups(ctx context.Context, b BackupSchedule) {
	if b.Every <= 0 {
		return
	}
	m := newBackupMetrics(s.opts.Registry)
	t := time.NewTicker(b.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if b.Leader() {
				s.backupOnce(ctx, b, m)
			}
		}
	}
}

func (s *Server) backupOnce(ctx context.Context, b BackupSchedule, m *backupMetrics) {
	start := time.Now()
	sum, name, err := s.writeBackup(ctx, b.To, start)
	m.seconds.Observe(time.Since(start).Seconds())
	if err != nil {
		m.runs.WithLabelValues("failure").Inc()
		s.log.Error("scheduled backup failed", "to", b.To, "err", err)
		return
	}
	m.runs.WithLabelValues("success").Inc()
	m.bytes.Add(float64(sum.Bytes))
	s.log.Info("scheduled backup", "to", b.To, "name", name, "shards", sum.Shards, "memories", sum.Memories,
		"bytes", sum.Bytes, "seconds", time.Since(start).Seconds())
	gone, err := backup.Prune(ctx, b.To, b.Keep)
	if err != nil {
		s.log.Warn("scheduled backup: prune", "to", b.To, "err", err)
	}
	for _, g := range gone {
		s.log.Info("scheduled backup pruned", "to", b.To, "name", g)
	}
}

func (s *Server) writeBackup(ctx context.Context, to string, t time.Time) (backup.Summary, string, error) {
	sink, err := backup.CreateNamed(ctx, to, t)
	if err != nil {
		return backup.Summary{}, "", err
	}
	sum, err := s.c.Backup(ctx, sink, s.backupOptions(false))
	if err != nil {
		sink.Abort()
		return sum, sink.Name, err
	}
	return sum, sink.Name, sink.Commit()
}
