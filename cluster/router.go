package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/memcluster/memcluster/internal/tenant"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/retrieval"
	"github.com/memcluster/memcluster/storage"
)

// Propose commits cmd on shard's leader, wherever it is, and returns the apply result. Commands are idempotent
// (the proposer fixed ids and contents), so a retry after a leader change cannot apply twice to different effect.
// A leader's refusal as overloaded (storage.ErrOverloaded) means nothing was proposed, and its client may send
// the request again, with new ids; so once an earlier attempt may have reached a leader's log, a later refusal
// is answered ErrOutcomeUnknown instead.
func (n *Node) Propose(ctx context.Context, shard uint32, cmd []byte) (storage.ApplyResult, error) {
	var res storage.ApplyResult
	var reached bool // an attempt may have reached a leader's log
	err := n.onShard(ctx, shard, "propose", false, func(ctx context.Context, r *Replica) error {
		var err error
		var applying bool
		res, applying, err = n.proposeLocalReached(ctx, r, cmd)
		reached = reached || applying && err != nil
		return err
	}, func(ctx context.Context, addr string) error {
		if err := ctx.Err(); err != nil {
			return err // not sent
		}
		var rep proposeReply
		err := n.call(ctx, http.MethodPost, addr, fmt.Sprintf("%sshards/%d/propose", internalPrefix, shard), nil,
			"application/octet-stream", cmd, &rep)
		if err != nil && ctx.Err() != nil && !hasCode(err, "overloaded") {
			// Sent, and the wait for the answer ended: the leader may have taken it.
			return fmt.Errorf("%w: %v", ErrOutcomeUnknown, err)
		}
		// A leader that lost its leadership while applying answers not_leader, and a call cut off after it was
		// sent answers unreachable: either may have reached the log.
		reached = reached || hasCode(err, "not_leader") || hasCode(err, "unreachable")
		res.Deleted, res.Conflict, res.Rev = rep.Deleted, rep.Conflict, rep.Rev
		return err
	})
	if errors.Is(err, storage.ErrWrongShard) {
		return n.reroutePropose(ctx, shard, cmd, err)
	}
	return res, refusedAfterReaching(err, reached)
}

// refusedAfterReaching turns a refusal as overloaded into ErrOutcomeUnknown when an earlier attempt may have
// reached a leader's log: its client must not take it as "nothing was written".
func refusedAfterReaching(err error, reached bool) error {
	if reached && errors.Is(err, storage.ErrOverloaded) {
		return fmt.Errorf("%w: an earlier attempt may have reached the shard's log, then: %v", ErrOutcomeUnknown, err)
	}
	return err
}

// hasCode reports whether err is a remote node's answer with code.
func hasCode(err error, code string) bool {
	var re *rpcError
	return errors.As(err, &re) && re.Code == code
}

// Search runs q on shard: on the leader after a read barrier, or with stale on any replica.
func (n *Node) Search(ctx context.Context, shard uint32, q retrieval.Query, stale bool) ([]retrieval.Result, error) {
	var out []retrieval.Result
	body, err := json.Marshal(q)
	if err != nil {
		return nil, err
	}
	err = n.routed(ctx, shard, q.UserID, func(shard uint32) error {
		return n.onShard(ctx, shard, "search", stale, func(ctx context.Context, r *Replica) error {
			var err error
			out, err = n.searchLocal(ctx, r, q, stale)
			return err
		}, func(ctx context.Context, addr string) error {
			var rep searchReply
			err := n.call(ctx, http.MethodPost, addr, fmt.Sprintf("%sshards/%d/search", internalPrefix, shard),
				url.Values{"stale": {fmt.Sprint(stale)}}, "application/json", body, &rep)
			out = rep.Results
			return err
		})
	})
	return out, err
}

// Get reads one memory from shard with the same consistency rules as Search.
func (n *Node) Get(ctx context.Context, shard uint32, user, id string, stale bool) (memory.Memory, error) {
	var m memory.Memory
	err := n.routed(ctx, shard, user, func(shard uint32) error {
		return n.onShard(ctx, shard, "get", stale, func(ctx context.Context, r *Replica) error {
			var err error
			m, err = n.getLocal(ctx, r, user, id, stale)
			return err
		}, func(ctx context.Context, addr string) error {
			return n.call(ctx, http.MethodGet, addr, fmt.Sprintf("%sshards/%d/memory", internalPrefix, shard),
				url.Values{"user": {user}, "id": {id}, "stale": {fmt.Sprint(stale)}}, "", nil, &m)
		})
	})
	return m, err
}

// onShard runs an operation where it may run: locally when this node leads the shard (or holds a replica and
// stale is allowed), else on the node believed to lead it. It retries with backoff while the leader is moving
// or unknown, until ctx ends.
func (n *Node) onShard(ctx context.Context, shard uint32, op string, stale bool,
	local func(context.Context, *Replica) error, remote func(ctx context.Context, addr string) error) (err error) {
	ctx, span := n.cfg.Tracer.Start(ctx, "shard."+op, trace.WithAttributes(
		attribute.Int("memcluster.shard", int(shard)), attribute.Bool("memcluster.stale", stale)))
	start := time.Now()
	defer func() {
		n.metrics.shardOps.WithLabelValues(op, strconv.FormatBool(stale)).Observe(time.Since(start).Seconds())
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}()
	backoff := 10 * time.Millisecond
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			n.metrics.rpcRetries.Inc()
			span.AddEvent("retry", trace.WithAttributes(attribute.Int("attempt", attempt)))
		}
		err := n.tryOnce(ctx, shard, op, stale, local, remote)
		if err == nil || !retryable(err) {
			return mapOutcome(err)
		}
		// The call itself ran into the request's deadline: the node asked (the leader, as far as this node
		// knows) was busy or cut off, which is not a shard without a leader.
		if re := (*rpcError)(nil); errors.As(err, &re) && re.Code == "unreachable" &&
			errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("shard %d %s: %w before the node leading it answered (%s)", shard, op, ctx.Err(), re.Message)
		}
		if serr := sleepCtx(ctx, backoff); serr != nil {
			return fmt.Errorf("shard %d %s: %w (last error: %v)", shard, op, ErrNoLeader, err)
		}
		backoff = min(2*backoff, 250*time.Millisecond)
	}
}

func (n *Node) tryOnce(ctx context.Context, shard uint32, op string, stale bool,
	local func(context.Context, *Replica) error, remote func(context.Context, string) error) error {
	r, hasLocal := n.Replica(shard)
	// A replica whose indexes still load would hold a stale read until they have: the leader answers it.
	if hasLocal && ((stale && !r.indexesLoading()) || r.IsLeader()) {
		return local(ctx, r)
	}
	target := n.leaderGuess(shard, r)
	if target == "" {
		return ErrNoLeader
	}
	addr := n.httpAddrOf(target)
	if addr == "" {
		// A hint naming a node no longer known (removed since a replica named it) would be taken again on every
		// retry, with nothing asked that could replace it: forget it, and the next try asks the placement.
		n.forgetHint(shard, target)
		return ErrNoLeader
	}
	trace.SpanFromContext(ctx).SetAttributes(attribute.String("memcluster.target", target))
	err := remote(ctx, addr)
	var re *rpcError
	if errors.As(err, &re) {
		n.metrics.forwarded.WithLabelValues(op, re.Code).Inc()
		n.mu.Lock()
		// A hint naming this node is out of date: the local replica was asked first.
		if re.Code == "not_leader" && re.Leader != "" && re.Leader != n.cfg.NodeID {
			n.leaderHint[shard] = re.Leader
		} else {
			delete(n.leaderHint, shard)
		}
		n.mu.Unlock()
	} else {
		n.metrics.forwarded.WithLabelValues(op, "ok").Inc()
	}
	return err
}

// LeaderURL is the API address of the node this node knows to lead shard, as "http://host:port" (https with
// cluster TLS), or "" when it knows no leader: the server names it to clients, which may send the shard's users'
// requests there and save the hop a coordinator forwards them over. A placement guess is never named.
func (n *Node) LeaderURL(shard uint32) string {
	id := ""
	r, ok := n.Replica(shard)
	if ok {
		id = r.Leader()
	}
	if id == "" {
		n.mu.RLock()
		id = n.leaderHint[shard]
		n.mu.RUnlock()
	}
	// This node is named only while its replica leads: a view or hint naming it otherwise is out of date.
	if id == "" || id == n.cfg.NodeID && !(ok && r.IsLeader()) {
		return ""
	}
	addr := n.httpAddrOf(id)
	if addr == "" {
		return ""
	}
	if n.cfg.TLS != nil {
		return "https://" + addr
	}
	return "http://" + addr
}

// leaderGuess picks the node to ask: the local replica's view of the leader, a hint from an earlier answer, or
// a replica from the placement (which answers with its own hint). It never names this node: tryOnce asked the
// local replica first, so a view or hint naming this node is out of date. (A hint naming this node, from a
// replica that answered "not leader, ask n1" while n1's replica was moving away, once failed every request for
// the shard here with "no leader": nothing was asked again that would have replaced it.)
func (n *Node) leaderGuess(shard uint32, r *Replica) string {
	self := n.cfg.NodeID
	if r != nil {
		if l := r.Leader(); l != "" && l != self {
			return l
		}
	}
	n.mu.RLock()
	hint := n.leaderHint[shard]
	n.mu.RUnlock()
	if hint == self {
		n.forgetHint(shard, self)
	} else if hint != "" {
		return hint
	}
	var others []string
	n.meta.read(func(s *MetaState) {
		if int(shard) < len(s.Placement) {
			for _, id := range s.Placement[shard] {
				if id != self {
					others = append(others, id)
				}
			}
		}
	})
	if len(others) == 0 {
		return ""
	}
	return others[int(time.Now().UnixNano()/int64(time.Millisecond))%len(others)]
}

// forgetHint drops shard's leader hint if it still names id.
func (n *Node) forgetHint(shard uint32, id string) {
	n.mu.Lock()
	if n.leaderHint[shard] == id {
		delete(n.leaderHint, shard)
	}
	n.mu.Unlock()
}

func (n *Node) httpAddrOf(id string) string {
	var info NodeInfo
	var known bool
	n.meta.read(func(s *MetaState) { info, known = s.Nodes[id] })
	if known {
		return info.HTTPAddr
	}
	if info, ok := n.liveMembers()[id]; ok {
		return info.HTTPAddr
	}
	return ""
}

func retryable(err error) bool {
	var re *rpcError
	if errors.As(err, &re) {
		return re.Code == "not_leader" || re.Code == "no_replica" || re.Code == "unreachable"
	}
	return errors.Is(err, ErrNotLeader) || errors.Is(err, ErrNoLeader) || errors.Is(err, ErrStopped)
}

// mapOutcome turns remote error codes back into the sentinels callers test for.
func mapOutcome(err error) error {
	var re *rpcError
	if !errors.As(err, &re) {
		return err
	}
	switch re.Code {
	case "not_found":
		return fmt.Errorf("%w: %s", memory.ErrNotFound, re.Message)
	case "invalid":
		return fmt.Errorf("%w: %s", memory.ErrInvalid, re.Message)
	case "forbidden":
		return fmt.Errorf("%w: %s", tenant.ErrForbidden, re.Message)
	case "wrong_shard":
		return fmt.Errorf("%w: %s", storage.ErrWrongShard, re.Message)
	case "refused":
		return fmt.Errorf("%w: %s", ErrRefused, re.Message)
	case "outcome_unknown":
		return fmt.Errorf("%w: %s", ErrOutcomeUnknown, re.Message)
	case "overloaded":
		return fmt.Errorf("%w: %s", storage.ErrOverloaded, re.Message)
	}
	return err
}
