package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

// opTimeout bounds one client operation including its retries; the schedule always heals within it.
const opTimeout = 3 * time.Second

// recorder collects the history; times are nanoseconds since the run started.
type recorder struct {
	mu    sync.Mutex
	start time.Time
	ops   []porcupine.Operation
}

func (r *recorder) now() int64 { return time.Since(r.start).Nanoseconds() }

func (r *recorder) add(op porcupine.Operation) {
	r.mu.Lock()
	r.ops = append(r.ops, op)
	r.mu.Unlock()
}

// client runs planned operations against whichever replica leads, the way cluster's router does for a shard.
type client struct {
	id   int
	c    *cluster
	rec  *recorder
	opts Options
	puts int
}

func (cl *client) run(ctx context.Context, ops []plannedOp) {
	for _, p := range ops {
		if sleepCtx(ctx, p.think) != nil {
			return
		}
		cl.do(ctx, p.in)
	}
}

// do runs one operation and records it. An operation known to have had no effect is left out of the history;
// one whose effect is unknown gets an infinite return time, so porcupine may place it anywhere after its call,
// including after everything (never applied).
func (cl *client) do(ctx context.Context, in input) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	call := cl.rec.now()
	out, ok := cl.exec(ctx, in)
	if !ok {
		return
	}
	ret := cl.rec.now()
	if out.Unknown {
		ret = math.MaxInt64
	}
	cl.rec.add(porcupine.Operation{ClientId: cl.id, Input: in, Output: out, Call: call, Return: ret})
}

func (cl *client) exec(ctx context.Context, in input) (output, bool) {
	switch in.Kind {
	case opPut:
		cl.puts++
		if n := cl.opts.Bugs.LoseAckedPuts; n > 0 && cl.puts%n == 0 {
			return output{}, true // planted bug: acknowledged, never proposed
		}
		return cl.write(ctx, encodePut(in), cl.opts.RetryAmbiguousPuts)
	case opDelete:
		return cl.write(ctx, encodeDelete(in), true)
	case opDeleteUser:
		return cl.write(ctx, encodeDeleteUser(in), true)
	case opGet:
		return cl.get(ctx, in.User)
	}
	panic(fmt.Sprintf("sim: op kind %d", in.Kind))
}

// write proposes cmd on the leader until it is applied or the deadline passes. A failure raft guarantees left no
// trace (not the leader, not enqueued) is always retried. After an ambiguous failure (leadership lost with the
// entry in flight, a stuck future) the entry may still commit later: retrying is only safe for commands whose
// second application answers like the first (deletes carry a request id), so other commands stop there unless
// retryAmbiguous asks to behave like cluster's router does.
func (cl *client) write(ctx context.Context, cmd []byte, retryAmbiguous bool) (output, bool) {
	ambiguous := false
	for {
		if l := cl.c.leader(); l != nil {
			res, err := applyOn(ctx, l, cmd)
			if err == nil {
				return output{Deleted: res.Deleted}, true
			}
			if !definite(err) {
				ambiguous = true
				if !retryAmbiguous {
					return output{Unknown: true}, true
				}
			}
		}
		if sleepCtx(ctx, 5*time.Millisecond) != nil {
			return output{Unknown: true}, ambiguous
		}
	}
}

func applyOn(ctx context.Context, l *replica, cmd []byte) (storage.ApplyResult, error) {
	f := l.raft.Apply(cmd, 50*time.Millisecond)
	if err := wait(ctx, f); err != nil {
		return storage.ApplyResult{}, err
	}
	res, _ := f.Response().(storage.ApplyResult)
	if res.Err != nil {
		return res, fmt.Errorf("%w: %v", ErrHalted, res.Err)
	}
	return res, nil
}

// definite reports errors after which raft guarantees the entry was never appended.
func definite(err error) bool {
	return errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrEnqueueTimeout)
}

// get reads the user's memories on the leader after the read-index protocol; reads have no effect, so a read that
// never succeeds is simply left out.
func (cl *client) get(ctx context.Context, user string) (output, bool) {
	for {
		if cl.opts.Bugs.StaleReads {
			return readUser(cl.c.laggard(), user), true // planted bug: no read index, most lagging replica
		}
		if l := cl.c.leader(); l != nil && l.readIndex(ctx) == nil {
			return readUser(l, user), true
		}
		if sleepCtx(ctx, 5*time.Millisecond) != nil {
			return output{}, false
		}
	}
}

func readUser(r *replica, user string) output {
	var ids []string
	var corrupt string
	err := r.db.ScanUser(shardID, user, func(m memory.Memory) bool {
		ids = append(ids, m.ID)
		if m.Text != textOf(m.ID) || m.UserID != user {
			corrupt = m.ID
		}
		return true
	})
	if err != nil {
		corrupt = "scan: " + err.Error()
	}
	return output{IDs: formatState(ids), Corrupt: corrupt}
}

// laggard is the replica with the lowest applied index.
func (c *cluster) laggard() *replica {
	ms := c.members()
	worst := ms[0]
	for _, r := range ms[1:] {
		if r.raft.AppliedIndex() < worst.raft.AppliedIndex() {
			worst = r
		}
	}
	return worst
}

func textOf(id string) string { return "memory " + id }

var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func encodePut(in input) []byte {
	ms := make([]memory.Memory, len(in.IDs))
	for i, id := range in.IDs {
		ms[i] = memory.Memory{ID: id, UserID: in.User, Type: memory.Episodic, Text: textOf(id),
			OccurredAt: epoch, CreatedAt: epoch, Importance: 0.5, Embedding: []float32{0.6, 0.8}, EmbedModel: "sim"}
	}
	b, err := storage.Encoder{Records: storage.RecordNewest}.Put(ms) // what a cluster of this build proposes
	if err != nil {
		panic(fmt.Sprintf("sim: encode put: %v", err)) // fixed, valid records: cannot fail
	}
	return b
}

// requestID makes a retried delete answer what its first application did (storage's once()); it must differ
// between operations, or a second delete would answer with the first one's count and delete nothing.
func requestID(in input) string { return in.Req }

func encodeDelete(in input) []byte {
	b, err := storage.EncodeDelete(storage.DeletePayload{UserID: in.User, IDs: in.IDs, RequestID: requestID(in)})
	if err != nil {
		panic(fmt.Sprintf("sim: encode delete: %v", err))
	}
	return b
}

func encodeDeleteUser(in input) []byte {
	b, err := storage.EncodeDeleteUser(storage.DeleteUserPayload{UserID: in.User, RequestID: requestID(in)})
	if err != nil {
		panic(fmt.Sprintf("sim: encode delete-user: %v", err))
	}
	return b
}
