package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/memcluster/memcluster/internal/httpjson"
	"github.com/memcluster/memcluster/internal/tenant"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/retrieval"
	"github.com/memcluster/memcluster/shardmap"
	"github.com/memcluster/memcluster/storage"
)

// Internal node-to-node API. A node receiving an internal call executes it on its own replica only and never
// forwards again, which rules out forwarding loops; the caller retries elsewhere using the leader hint.
const internalPrefix = "/internal/v1/"

type rpcError struct {
	Code    string `json:"code"` // not_leader, no_replica, not_found, invalid, internal
	Message string `json:"message"`
	Leader  string `json:"leader,omitempty"`
}

func (e *rpcError) Error() string { return e.Code + ": " + e.Message }

type proposeReply struct {
	Deleted  int    `json:"deleted"`
	Conflict bool   `json:"conflict,omitempty"`
	Rev      uint64 `json:"rev,omitempty"`
}

type searchReply struct {
	Results []retrieval.Result `json:"results"`
}

// ReplicaReport is one local replica as its node reports it.
type ReplicaReport struct {
	Shard   uint32 `json:"shard"`
	Leader  string `json:"leader"`
	State   string `json:"state"`
	Applied uint64 `json:"applied"`
	Halted  bool   `json:"halted,omitempty"`
	// On the leader: the group's voters and non-voters (a replica being added catches up as a non-voter).
	Voters    []string `json:"voters,omitempty"`
	Nonvoters []string `json:"nonvoters,omitempty"`
	Bytes     uint64   `json:"bytes,omitempty"` // estimated disk bytes of the shard on this node
	// The range the replica owns as of its applied index (absent: never split, its whole bucket), and its
	// memory records (-1: no index).
	Range    *shardmap.Range `json:"range,omitempty"`
	Memories int64           `json:"memories"`
	// Configured: the replica knows its group's configuration (it heard from a leader, or was bootstrapped);
	// until then it is not promoted (it may refuse votes: voteGuard).
	Configured bool `json:"configured,omitempty"`
	// IndexesLoading: the replica takes part in its group while its indexes load (after a restart); its searches
	// wait until they have.
	IndexesLoading bool `json:"indexes_loading,omitempty"`
}

// NodeReport is what GET /internal/v1/node answers.
type NodeReport struct {
	ID       string          `json:"id"`
	Replicas []ReplicaReport `json:"replicas"`
	// MaxCommand is the highest shard command type the node's build applies (storage.MaxCommandType); absent
	// (0) from builds before CmdPrune, which halt on it.
	MaxCommand int `json:"max_command,omitempty"`
	// MetaApplied is the index the node's meta replica has applied (a restarted node waits to reach the meta
	// leader's before it restarts its replicas).
	MetaApplied uint64 `json:"meta_applied,omitempty"`
}

// InternalHandler serves the node-to-node API; mount it under /internal/v1/.
func (n *Node) InternalHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /internal/v1/shards/{shard}/propose", n.traced("propose", n.handlePropose))
	mux.HandleFunc("POST /internal/v1/shards/{shard}/search", n.traced("search", n.handleSearch))
	mux.HandleFunc("GET /internal/v1/shards/{shard}/memory", n.traced("get", n.handleGet))
	mux.HandleFunc("GET /internal/v1/shards/{shard}/side", n.traced("side", n.handleReadSide))
	mux.HandleFunc("GET /internal/v1/shards/{shard}/recent", n.traced("recent", n.handleRecent))
	mux.HandleFunc("GET /internal/v1/shards/{shard}/list", n.traced("list", n.handleList))
	mux.HandleFunc("GET /internal/v1/shards/{shard}/users", n.traced("users", n.handleUsers))
	mux.HandleFunc("POST /internal/v1/shards/{shard}/transfer-leader", n.traced("transfer", n.handleTransfer))
	mux.HandleFunc("GET /internal/v1/shards/{shard}/backup", n.traced("backup", n.handleBackupShard))
	mux.HandleFunc("POST /internal/v1/shards/{shard}/restore", n.traced("restore", n.handleRestoreShard))
	mux.HandleFunc("POST /internal/v1/meta/propose", n.handleMetaPropose)
	mux.HandleFunc("POST /internal/v1/removed", n.handleRemoved)
	mux.HandleFunc("GET /internal/v1/node", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, n.Report())
	})
	return withIdentity(withReadMode(mux))
}

// traced continues the caller's trace (W3C trace context in the headers) in a server span on this node.
func (n *Node) traced(op string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := traceContext.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := n.cfg.Tracer.Start(ctx, "shard."+op+".serve", trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("memcluster.shard", r.PathValue("shard")),
				attribute.String("memcluster.node", n.cfg.NodeID)))
		defer span.End()
		h(w, r.WithContext(ctx))
	}
}

// Report describes the local replicas.
func (n *Node) Report() NodeReport {
	rep := NodeReport{ID: n.cfg.NodeID, MaxCommand: int(storage.MaxCommandType), MetaApplied: n.mraft.raft.AppliedIndex()}
	for _, s := range n.LocalShards() {
		r, ok := n.Replica(s)
		if !ok {
			continue
		}
		rr := ReplicaReport{Shard: s, Leader: r.Leader(), State: r.raft.State().String(),
			Applied: r.FSM.AppliedIndex(), Halted: r.FSM.Halted() || r.indexesFailed() != nil, Bytes: n.db.ShardBytes(s), Memories: -1}
		if o := r.FSM.Owned(); o != nil {
			rng := o.Range
			rr.Range = &rng
		}
		if servers, err := r.Configuration(); err == nil {
			rr.Configured = len(servers) > 0
		}
		if r.Index != nil {
			rr.Memories = int64(r.Index.Memories())
		}
		rr.IndexesLoading = r.indexesLoading()
		if r.IsLeader() {
			rr.Voters, rr.Nonvoters = r.members()
		}
		rep.Replicas = append(rep.Replicas, rr)
	}
	return rep
}

func (n *Node) localReplica(w http.ResponseWriter, r *http.Request) (*Replica, bool) {
	s, err := strconv.ParseUint(r.PathValue("shard"), 10, 32)
	if err != nil {
		writeRPCError(w, &rpcError{Code: "invalid", Message: "bad shard id"})
		return nil, false
	}
	rep, ok := n.Replica(uint32(s))
	if !ok {
		writeRPCError(w, &rpcError{Code: "no_replica", Message: fmt.Sprintf("node %s holds no replica of shard %d", n.cfg.NodeID, s)})
		return nil, false
	}
	return rep, true
}

func (n *Node) handlePropose(w http.ResponseWriter, r *http.Request) {
	rep, ok := n.localReplica(w, r)
	if !ok {
		return
	}
	body, err := readCommand(r, maxForwardedCommand)
	if err != nil {
		writeRPCError(w, &rpcError{Code: "invalid", Message: err.Error()})
		return
	}
	res, err := n.proposeLocal(r.Context(), rep, body)
	if err != nil {
		writeRPCError(w, toRPCError(err, rep))
		return
	}
	writeJSON(w, http.StatusOK, proposeReply{Deleted: res.Deleted, Conflict: res.Conflict, Rev: res.Rev})
}

// maxForwardedCommand bounds the body of a forwarded proposal.
const maxForwardedCommand = 64 << 20

// readCommand reads a forwarded command, refusing one over limit bytes. A declared length up to
// httpjson.MaxPresize, which the coordinator always sends, sizes the slice exactly: it becomes the raft entry, so
// it cannot come from a pool. Without one, or above, the slice grows as io.ReadAll grows it.
func readCommand(r *http.Request, limit int64) ([]byte, error) {
	n := r.ContentLength
	if n > limit {
		return nil, fmt.Errorf("command of %d bytes: over the %d allowed", n, limit)
	}
	if n > 0 && n <= httpjson.MaxPresize {
		b := make([]byte, n)
		if _, err := io.ReadFull(r.Body, b); err != nil {
			return nil, fmt.Errorf("read command of %d bytes: %w", n, err)
		}
		return b, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = fmt.Errorf("command over the %d bytes allowed", limit)
	}
	return b, err
}

func (n *Node) proposeLocal(ctx context.Context, rep *Replica, cmd []byte) (storage.ApplyResult, error) {
	res, _, err := n.proposeLocalReached(ctx, rep, cmd)
	return res, err
}

// proposeLocalReached is proposeLocal that also reports whether the command went to raft, so that an error may
// come after it reached the log.
func (n *Node) proposeLocalReached(ctx context.Context, rep *Replica, cmd []byte) (storage.ApplyResult, bool, error) {
	if err := checkCommand(ctx, cmd); err != nil {
		return storage.ApplyResult{}, false, err
	}
	if !rep.IsLeader() {
		return storage.ApplyResult{}, false, ErrNotLeader
	}
	if (n.db.WriteHealth() != nil || rep.indexesLoading()) && n.hasPeers(rep) {
		// Leadership is being handed to a replica that can apply (readonly.go): the coordinator retries there.
		return storage.ApplyResult{}, false, ErrNotLeader
	}
	// The leader's own log write comes first, so its storage decides whether a write may come in now.
	if err := n.db.WaitWritableFor(ctx, n.cfg.OverloadWait, cmd); err != nil {
		return storage.ApplyResult{}, false, err
	}
	res, err := rep.Apply(ctx, cmd)
	return res, true, err
}

func (n *Node) handleSearch(w http.ResponseWriter, r *http.Request) {
	rep, ok := n.localReplica(w, r)
	if !ok {
		return
	}
	var q retrieval.Query
	if err := json.NewDecoder(io.LimitReader(r.Body, 16<<20)).Decode(&q); err != nil {
		writeRPCError(w, &rpcError{Code: "invalid", Message: err.Error()})
		return
	}
	res, err := n.searchLocal(r.Context(), rep, q, r.URL.Query().Get("stale") == "true")
	if err != nil {
		writeRPCError(w, toRPCError(err, rep))
		return
	}
	writeJSON(w, http.StatusOK, searchReply{Results: res})
}

func (n *Node) searchLocal(ctx context.Context, rep *Replica, q retrieval.Query, stale bool) ([]retrieval.Result, error) {
	if err := checkQuery(ctx, q); err != nil {
		return nil, err
	}
	if err := barrier(ctx, rep, stale); err != nil {
		return nil, err
	}
	if rep.Index == nil {
		return nil, errors.New("shard has no index")
	}
	var out []retrieval.Result
	search := func() (err error) {
		if !stale {
			// The barrier guarantees the state; the full-text index is fed asynchronously and must catch up too.
			if err := rep.Index.WaitIndexed(ctx, rep.FSM.AppliedIndex()); err != nil {
				return err
			}
		}
		out, err = rep.Index.Search(ctx, q)
		return err
	}
	var err error
	if q.AllUsers {
		err = search()
	} else {
		// A split that moves the user while the indexes are searched drops its memories from them.
		err = rep.FSM.ReadOwned(q.UserID, search)
	}
	return out, err
}

func (n *Node) handleGet(w http.ResponseWriter, r *http.Request) {
	rep, ok := n.localReplica(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	m, err := n.getLocal(r.Context(), rep, q.Get("user"), q.Get("id"), q.Get("stale") == "true")
	if err != nil {
		writeRPCError(w, toRPCError(err, rep))
		return
	}
	writeJSON(w, http.StatusOK, m)
}

func (n *Node) getLocal(ctx context.Context, rep *Replica, user, id string, stale bool) (memory.Memory, error) {
	var m memory.Memory
	err := readUser(ctx, rep, user, stale, func() (err error) {
		m, err = n.db.GetMemory(rep.Shard, user, id)
		return err
	})
	return m, err
}

func toRPCError(err error, rep *Replica) *rpcError {
	switch {
	case errors.Is(err, ErrNotLeader):
		return &rpcError{Code: "not_leader", Message: err.Error(), Leader: rep.Leader()}
	case errors.Is(err, memory.ErrNotFound):
		return &rpcError{Code: "not_found", Message: err.Error()}
	case errors.Is(err, memory.ErrInvalid), errors.Is(err, storage.ErrUnknownCommand):
		return &rpcError{Code: "invalid", Message: err.Error()}
	case errors.Is(err, tenant.ErrForbidden):
		return &rpcError{Code: "forbidden", Message: err.Error()}
	case errors.Is(err, storage.ErrWrongShard):
		return &rpcError{Code: "wrong_shard", Message: err.Error()}
	case errors.Is(err, ErrRefused):
		return &rpcError{Code: "refused", Message: err.Error()}
	case errors.Is(err, ErrOutcomeUnknown):
		return &rpcError{Code: "outcome_unknown", Message: err.Error()}
	case errors.Is(err, storage.ErrOverloaded):
		return &rpcError{Code: "overloaded", Message: err.Error()}
	}
	return &rpcError{Code: "internal", Message: err.Error()}
}

func writeRPCError(w http.ResponseWriter, e *rpcError) {
	status := http.StatusInternalServerError
	switch e.Code {
	case "not_leader", "no_replica":
		status = http.StatusMisdirectedRequest
	case "not_found":
		status = http.StatusNotFound
	case "invalid":
		status = http.StatusBadRequest
	case "forbidden":
		status = http.StatusForbidden
	case "wrong_shard", "refused":
		status = http.StatusConflict
	case "outcome_unknown":
		status = http.StatusGatewayTimeout
	case "overloaded":
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, e)
}

// writeJSON answers with v; a value that cannot be encoded becomes an internal error that says so.
func writeJSON(w http.ResponseWriter, status int, v any) {
	if err := httpjson.Write(w, status, v); err != nil {
		_ = httpjson.Write(w, http.StatusInternalServerError, rpcError{Code: "internal", Message: err.Error()})
	}
}

// call performs one internal request against node addr and decodes the answer into out.
func (n *Node) call(ctx context.Context, method, addr, path string, q url.Values, ctype string, body []byte, out any) error {
	scheme := "http://"
	if n.cfg.TLS != nil {
		scheme = "https://"
	}
	u := scheme + addr + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if n.cfg.ClusterToken != "" {
		req.Header.Set("Authorization", "Bearer "+n.cfg.ClusterToken)
	}
	if id, ok := tenant.From(ctx); ok {
		req.Header.Set(tenant.Header, id.Encode())
	}
	if IsUnconfirmed(ctx) {
		req.Header.Set(readModeHeader, readModeUnconfirmed)
	}
	traceContext.Inject(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := n.http.Do(req)
	if err != nil {
		return &rpcError{Code: "unreachable", Message: err.Error()}
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		return fmt.Errorf("node at %s refused this node's cluster token (give every node the same --cluster-token)", addr)
	}
	if resp.StatusCode != http.StatusOK {
		var e rpcError
		if json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&e) != nil || e.Code == "" {
			e = rpcError{Code: "internal", Message: resp.Status}
		}
		return &e
	}
	return httpjson.Read(resp.Body, resp.ContentLength, out)
}

// traceContext carries W3C trace context on internal calls; it is stateless, and fixed so that tracing across
// nodes does not depend on what a process set as its global propagator.
var traceContext = propagation.TraceContext{}
