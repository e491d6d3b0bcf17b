package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/internal/tenant"
	"github.com/memcluster/memcluster/storage"
)

// Shard streams for backups and restores between nodes. A stream is long: these calls use a client without the
// internal API's 30 s bound, and lift the HTTP server's read and write deadlines for the request.

// statsTrailer carries a shard stream's storage.BackupStats (JSON) after its bytes; errTrailer an error that
// ended the stream early (the caller then fails, never taking a short stream for a whole one).
const (
	statsTrailer = "Memcluster-Backup-Stats"
	errTrailer   = "Memcluster-Backup-Error"
)

// shardRestoreTimeout bounds one shard's restore through raft (copy into the snapshot store, FSM restore, and a
// no-op entry replicated to the followers).
const shardRestoreTimeout = 30 * time.Minute

func (n *Node) streamClient() *http.Client { return &http.Client{Transport: n.http.Transport} }

func noDeadlines(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
}

// handleBackupShard streams the shard's state after a read barrier on its leader.
func (n *Node) handleBackupShard(w http.ResponseWriter, r *http.Request) {
	rep, ok := n.localReplica(w, r)
	if !ok {
		return
	}
	if !tenantAll(r.Context()) {
		writeRPCError(w, &rpcError{Code: "forbidden", Message: "a shard backup spans every user"})
		return
	}
	if err := rep.ReadBarrier(r.Context()); err != nil {
		writeRPCError(w, toRPCError(err, rep))
		return
	}
	noDeadlines(w)
	w.Header().Set("Trailer", statsTrailer+", "+errTrailer)
	w.Header().Set("Content-Type", "application/octet-stream")
	w.WriteHeader(http.StatusOK)
	st, err := rep.FSM.WriteBackup(w)
	if err != nil {
		w.Header().Set(errTrailer, strings.ReplaceAll(err.Error(), "\n", " "))
		return
	}
	b, _ := json.Marshal(st)
	w.Header().Set(statsTrailer, string(b))
}

// tenantAll reports whether the request's identity may see every user (no identity: an unauthenticated cluster).
func tenantAll(ctx context.Context) bool {
	id, ok := tenant.From(ctx)
	return !ok || id.All
}

// backupShard writes shard's stream from its leader to w. It retries while nothing has been written.
func (n *Node) backupShard(ctx context.Context, shard uint32, w io.Writer) (storage.BackupStats, error) {
	var st storage.BackupStats
	err := n.onShard(ctx, shard, "backup", false, func(ctx context.Context, r *Replica) error {
		if err := r.ReadBarrier(ctx); err != nil {
			return err
		}
		var err error
		st, err = r.FSM.WriteBackup(w)
		return streamErr(err)
	}, func(ctx context.Context, addr string) error {
		var err error
		st, err = n.fetchShard(ctx, addr, shard, w)
		return err
	})
	return st, err
}

// streamErr makes an error met while bytes flow final (%v, not %w: retryable must not see a leader change in
// it), since a retry would append to a half-written part.
func streamErr(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("shard stream broke off: %v", err)
}

func (n *Node) internalRequest(ctx context.Context, method, addr, path string, q url.Values, body io.Reader) (*http.Response, error) {
	scheme := "http://"
	if n.cfg.TLS != nil {
		scheme = "https://"
	}
	req, err := http.NewRequestWithContext(ctx, method, scheme+addr+path+"?"+q.Encode(), body)
	if err != nil {
		return nil, err
	}
	if n.cfg.ClusterToken != "" {
		req.Header.Set("Authorization", "Bearer "+n.cfg.ClusterToken)
	}
	if id, ok := tenant.From(ctx); ok {
		req.Header.Set(tenant.Header, id.Encode())
	}
	resp, err := n.streamClient().Do(req)
	if err != nil {
		return nil, &rpcError{Code: "unreachable", Message: err.Error()}
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		var e rpcError
		if json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&e) != nil || e.Code == "" {
			e = rpcError{Code: "internal", Message: resp.Status}
		}
		return nil, &e
	}
	return resp, nil
}

func (n *Node) fetchShard(ctx context.Context, addr string, shard uint32, w io.Writer) (storage.BackupStats, error) {
	var st storage.BackupStats
	resp, err := n.internalRequest(ctx, http.MethodGet, addr, fmt.Sprintf("%sshards/%d/backup", internalPrefix, shard), nil, nil)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return st, streamErr(err)
	}
	if e := resp.Trailer.Get(errTrailer); e != "" {
		return st, streamErr(fmt.Errorf("shard %d on %s: %s", shard, addr, e))
	}
	if err := json.Unmarshal([]byte(resp.Trailer.Get(statsTrailer)), &st); err != nil {
		return st, streamErr(fmt.Errorf("shard %d on %s: stream ended without its stats", shard, addr))
	}
	return st, nil
}

// restorePart is one shard's stream as spooled on the coordinating node.
type restorePart struct {
	shard uint32
	path  string
	size  int64
	index uint64 // the applied index the stream reflects (raft must restore at or above it)
}

// handleRestoreShard installs a shard stream through raft's user restore on the leader; raft then sends it to
// the followers by snapshot install.
func (n *Node) handleRestoreShard(w http.ResponseWriter, r *http.Request) {
	rep, ok := n.localReplica(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	size, err1 := strconv.ParseInt(q.Get("size"), 10, 64)
	index, err2 := strconv.ParseUint(q.Get("index"), 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		writeRPCError(w, &rpcError{Code: "invalid", Message: "size and index: " + err.Error()})
		return
	}
	noDeadlines(w)
	if err := n.restoreLocal(r.Context(), rep, r.Body, size, index); err != nil {
		writeRPCError(w, toRPCError(err, rep))
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// restoreLocal replaces the shard's state with the stream, whatever it held: the coordinator checked the cluster
// was fresh before it began, and a retry after a lost answer or a leader change (a leader busy installing can
// lose its followers) must install the same stream again rather than be refused for holding it already.
func (n *Node) restoreLocal(ctx context.Context, rep *Replica, body io.Reader, size int64, index uint64) error {
	if !tenantAll(ctx) {
		return fmt.Errorf("%w: a shard restore spans every user", tenant.ErrForbidden)
	}
	if !rep.IsLeader() {
		return ErrNotLeader
	}
	meta := &raft.SnapshotMeta{Version: raft.SnapshotVersionMax, Index: index, Size: size}
	if err := rep.raft.Restore(meta, body, shardRestoreTimeout); err != nil {
		return fmt.Errorf("restore shard %d: %w", rep.Shard, mapRaftErr(err))
	}
	return nil
}

// restoreShard installs one spooled part on the shard's leader, wherever it is; the spool file is reopened for
// every attempt.
func (n *Node) restoreShard(ctx context.Context, p restorePart) error {
	open := func() (*os.File, error) { return os.Open(p.path) }
	return n.onShard(ctx, p.shard, "restore", false, func(ctx context.Context, r *Replica) error {
		f, err := open()
		if err != nil {
			return err
		}
		defer f.Close()
		return n.restoreLocal(ctx, r, f, p.size, p.index)
	}, func(ctx context.Context, addr string) error {
		f, err := open()
		if err != nil {
			return err
		}
		defer f.Close()
		q := url.Values{"size": {fmt.Sprint(p.size)}, "index": {fmt.Sprint(p.index)}}
		resp, err := n.internalRequest(ctx, http.MethodPost, addr, fmt.Sprintf("%sshards/%d/restore", internalPrefix, p.shard), q, f)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	})
}
