package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/cluster"
	"github.com/memcluster/memcluster/consolidation"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

// The memory-model endpoints share one shape: read the user's state (with its revision), decide with the pure
// consolidation package, and commit every change — memories, facts, sessions, history — as one user
// transaction guarded by that revision. A conflict (someone changed the user meanwhile) re-reads and decides
// again, so concurrent flushes never both ADD the same fact.
const maxConflictRetries = 8

// userTxn collects what one decision changes.
type userTxn struct {
	user    string
	rev     uint64
	seen    bool
	now     time.Time
	puts    []memory.Memory
	side    []storage.SideKV
	deletes []string
	facts   map[string]consolidation.Fact // the facts as read, for history's "before"
	// replace commits the puts as an update in place (storage.CmdUpdate): only if each memory still exists.
	replace bool
	ids     *memory.IDSource
	// after runs once the transaction committed (not on a conflict): clean-ups outside the shard, such as
	// deleting an external segment that a warm restore made obsolete. Failures are logged, not returned.
	after []func(context.Context) error
}

func (t *userTxn) afterCommit(fn func(context.Context) error) { t.after = append(t.after, fn) }

// observe records the revision a read saw; the first one guards the transaction (a later, newer one only
// means the commit will conflict and the decision is redone).
func (t *userTxn) observe(rev uint64) {
	if !t.seen {
		t.rev, t.seen = rev, true
	}
}

func (t *userTxn) setSide(space byte, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %c/%s: %w", space, key, err)
	}
	t.side = append(t.side, storage.SideKV{Space: space, Key: key, Value: b})
	return nil
}

func (t *userTxn) delSide(space byte, key string) {
	t.side = append(t.side, storage.SideKV{Space: space, Key: key})
}

// historyEvent is one stored history record (apiv1.HistoryEvent without its id, which is the key).
type historyEvent struct {
	MemoryID string    `json:"memory_id"`
	Op       string    `json:"op"`
	Time     time.Time `json:"time"`
	Before   any       `json:"before,omitempty"`
	After    any       `json:"after,omitempty"`
	Cause    string    `json:"cause"`
}

func (t *userTxn) history(memID, op string, before, after any, cause string) error {
	return t.setSide(storage.SpaceHistory, t.ids.New(t.now),
		historyEvent{MemoryID: memID, Op: op, Time: t.now, Before: before, After: after, Cause: cause})
}

// Errors of the memory-model write path.
var (
	// errConflict: the user's state kept changing while a decision was made; the client may retry.
	errConflict = errors.New("user state kept changing")
	// errEmbedding: the embedding provider failed.
	errEmbedding = errors.New("embedding failed")
)

// txnReads is what a transaction's decision reads, which decides how its first decision reads.
type txnReads bool

const (
	// readsMemories: memory records too. Plain puts and deletes do not move the user's revision, so the commit's
	// condition does not cover them, and every read is confirmed with a quorum.
	readsMemories txnReads = false
	// readsSideOnly: only side records (sessions, facts), every change of which moves the user's revision. The
	// first decision reads the leader's applied state unconfirmed (cluster.Unconfirmed): a read that missed a
	// write makes the commit conflict, and the next decision reads confirmed.
	readsSideOnly txnReads = true
)

// transact runs decide until its transaction commits without a conflict, and answers failures itself.
func (s *Server) transact(w http.ResponseWriter, r *http.Request, user string, reads txnReads,
	decide func(ctx context.Context, shard uint32, t *userTxn) error) bool {
	named := false
	err := s.transactCtx(r.Context(), user, reads, func(ctx context.Context, shard uint32, t *userTxn) error {
		if !named {
			s.nameLeader(w, shard)
			named = true
		}
		return decide(ctx, shard, t)
	})
	if err == nil {
		return true
	}
	s.failTxn(w, r, err)
	return false
}

// failTxn answers a failed memory-model transaction.
func (s *Server) failTxn(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, errConflict):
		writeError(w, http.StatusConflict, "conflict", err.Error(), "")
	case errors.Is(err, errEmbedding):
		writeError(w, http.StatusBadGateway, "embedding_failed", err.Error(), "")
	case errors.Is(err, errColdStore):
		writeError(w, http.StatusBadGateway, "cold_store_failed", err.Error(), "")
	default:
		s.fail(w, r, err)
	}
}

// transactCtx is transact without HTTP: background jobs (the idle-session sweeper) use it too.
func (s *Server) transactCtx(ctx context.Context, user string, reads txnReads,
	decide func(ctx context.Context, shard uint32, t *userTxn) error) error {
	shard, err := s.c.ShardFor(ctx, user)
	if err != nil {
		return err
	}
	for attempt := 0; attempt < maxConflictRetries; attempt++ {
		t := &userTxn{user: user, now: s.opts.Now().UTC(), ids: s.ids}
		// A first decision on unconfirmed reads (readsSideOnly) that would answer without a commit (an error,
		// nothing to change) would answer from what it read, so it is decided again on confirmed reads first.
		confirmed := attempt > 0 || reads == readsMemories || s.opts.ConfirmTxnReads
		dctx := ctx
		if !confirmed {
			dctx = cluster.Unconfirmed(ctx)
		}
		err := decide(dctx, shard, t)
		noop := len(t.puts) == 0 && len(t.side) == 0 && len(t.deletes) == 0
		if !confirmed && (err != nil || noop) && ctx.Err() == nil {
			s.metrics.reconfirmed.Inc()
			continue
		}
		if err != nil {
			return err
		}
		if noop {
			return nil // nothing to change
		}
		if err := s.embedAll(ctx, t.puts); err != nil {
			return fmt.Errorf("%w: %v", errEmbedding, err)
		}
		enc := storage.Encoder{Records: s.c.RecordFormat(), Commands: s.c.CommandFormat()}
		encode := enc.UserTxn
		if t.replace {
			encode = enc.Update
		}
		cmd, err := encode(storage.UserTxnPayload{UserID: user, ExpectRev: t.rev, Puts: t.puts, Side: t.side,
			Deletes: t.deletes})
		if err != nil {
			return err
		}
		res, err := s.c.Propose(ctx, shard, cmd)
		if err != nil {
			return err
		}
		if !res.Conflict {
			for _, fn := range t.after {
				if err := fn(ctx); err != nil {
					s.log.Warn("after commit", "user_id", user, "err", err)
				}
			}
			return nil
		}
		s.metrics.conflicts.Inc()
	}
	return fmt.Errorf("%w: user %q changed %d times while this request decided; retry", errConflict, user, maxConflictRetries)
}

// embedAll fills the embeddings of memories that have none (facts re-put with a new status keep theirs).
func (s *Server) embedAll(ctx context.Context, ms []memory.Memory) error {
	var idx []int
	var texts []string
	for i := range ms {
		if ms[i].Embedding == nil {
			idx, texts = append(idx, i), append(texts, ms[i].Text)
		}
	}
	if len(texts) == 0 {
		return nil
	}
	vecs, err := s.emb.Embed(ctx, texts)
	if err != nil {
		return err
	}
	for j, i := range idx {
		ms[i].Embedding, ms[i].EmbedModel = vecs[j], s.emb.Fingerprint()
	}
	return nil
}

// readFacts reads every fact of user (current and past), oldest first.
func (s *Server) readFacts(ctx context.Context, shard uint32, t *userTxn) ([]consolidation.Fact, error) {
	rd, err := s.c.ReadSide(ctx, shard, storage.SpaceFacts, t.user, "", 0, false)
	if err != nil {
		return nil, err
	}
	t.observe(rd.Rev)
	facts := make([]consolidation.Fact, 0, len(rd.Items))
	t.facts = make(map[string]consolidation.Fact, len(rd.Items))
	for _, kv := range rd.Items {
		var f consolidation.Fact
		if err := json.Unmarshal(kv.Value, &f); err != nil {
			return nil, fmt.Errorf("decode fact %s: %w", kv.Key, err)
		}
		facts = append(facts, f)
		t.facts[f.ID] = f
	}
	sort.SliceStable(facts, func(i, j int) bool { return facts[i].RecordedAt.Before(facts[j].RecordedAt) })
	return facts, nil
}

// consolidator is the deterministic consolidation with this server's options and id source.
func (s *Server) consolidator() consolidation.Consolidator {
	return consolidation.Consolidator{Options: s.opts.Model, NewID: s.ids.New, Extract: s.opts.Extract}
}

// countDecisions records a trigger and its fact decisions in the metrics.
func (s *Server) countDecisions(trigger string, ds []apiv1.FactDecision) {
	s.metrics.triggers.WithLabelValues(trigger).Inc()
	for _, d := range ds {
		s.metrics.decisions.WithLabelValues(trigger, d.Decision).Inc()
	}
}
