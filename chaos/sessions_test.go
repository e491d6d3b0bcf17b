package chaos

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/client"
)

// Sessions: a second workload beside the register one. An append is a read-modify-write of the whole session
// record, committed on the condition that the user's revision it read is still current, and its first decision
// reads the leader's state without a quorum round trip; a lost update, or an answer from a deposed leader, shows
// here. Its clients append one message at a time to sessions they share (sessionAppends attempts a session, so
// every message stays in the 20-message window) and read sessions back. Every session an append or a read
// answers must hold each append acknowledged before that call began, and none that definitely failed; after
// healing, every session is read through every node, and an acknowledged append missing there is lost.

// sessionAppends is how many appends each session gets, fewer than the window's 20 messages.
const sessionAppends = 16

var flagSessionClients = flag.Int("chaos.session-clients", 2, "concurrent clients appending to and reading sessions")

// sessionEvent is one append (text set) or read of a session.
type sessionEvent struct {
	client          int
	user, run, text string
	call, ret       time.Duration // ret = -1 when the outcome is unknown
	acked, failed   bool          // an append acknowledged, or one that definitely did not apply
	answered        bool          // window is the session as the call answered it
	window          []string
}

type sessionLog struct {
	origin  time.Time
	mu      sync.Mutex
	events  []*sessionEvent
	appends atomic.Int64 // appends started, which picks each one's session
}

func (l *sessionLog) now() time.Duration { return time.Since(l.origin) }

func (l *sessionLog) record(e *sessionEvent) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

func (l *sessionLog) snapshot() []*sessionEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*sessionEvent(nil), l.events...)
}

// sessionWorkload runs session clients, numbered from first (after the register workload's clients).
type sessionWorkload struct {
	l       *sessionLog
	c       *testCluster
	users   []string
	seed    uint64
	first   int
	clients int
}

// session names the session of the k-th append: consecutive appends share one, so clients contend on it.
func (w *sessionWorkload) session(k int64) (user, run string) {
	s := int(k / sessionAppends)
	return w.users[s%len(w.users)], fmt.Sprintf("chaos-%d-s%d", w.seed, s)
}

func (w *sessionWorkload) run(ctx context.Context) *sync.WaitGroup {
	var wg sync.WaitGroup
	for i := 0; i < w.clients; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(w.seed^0x5e55, uint64(i)+1))
			for n := 0; ctx.Err() == nil; n++ {
				up := w.c.up()
				if len(up) == 0 {
					time.Sleep(50 * time.Millisecond)
					continue
				}
				nd := up[rng.IntN(len(up))]
				var e *sessionEvent
				if k := w.l.appends.Load(); k > 0 && rng.IntN(100) < 30 {
					user, run := w.session(rng.Int64N(k))
					e = readSession(nd, w.l, w.first+i, user, run)
				} else {
					e = w.append(nd, w.first+i, n)
				}
				if e == nil {
					time.Sleep(time.Duration(20+rng.IntN(80)) * time.Millisecond) // no answer: back off a little
					continue
				}
				w.l.record(e)
				if e.failed || e.ret < 0 {
					time.Sleep(time.Duration(20+rng.IntN(80)) * time.Millisecond)
				}
			}
		}(i)
	}
	return &wg
}

func (w *sessionWorkload) append(nd *node, c, n int) *sessionEvent {
	user, run := w.session(w.l.appends.Add(1) - 1)
	e := &sessionEvent{client: c, user: user, run: run, text: fmt.Sprintf("s%d c%d append%d", w.seed, c, n)}
	e.call = w.l.now()
	st, err := nd.client.Append(context.Background(), user, run,
		apiv1.AppendRequest{Messages: []apiv1.Message{{Role: "user", Text: e.text}}})
	e.ret = w.l.now()
	switch {
	case err == nil:
		e.acked, e.answered, e.window = true, true, windowTexts(st)
	case definiteSessionFailure(err):
		e.failed = true
	default:
		e.ret = -1
	}
	return e
}

// readSession reads a session through nd; nil when nd gave no answer.
func readSession(nd *node, l *sessionLog, c int, user, run string) *sessionEvent {
	e := &sessionEvent{client: c, user: user, run: run, call: l.now()}
	st, err := nd.client.Session(context.Background(), user, run)
	e.ret = l.now()
	if nf, _ := classify(err); err != nil && !nf {
		return nil
	}
	e.answered, e.window = true, windowTexts(st) // a session not found holds nothing
	return e
}

func windowTexts(st apiv1.SessionState) []string {
	out := make([]string, len(st.Window))
	for i, m := range st.Window {
		out[i] = m.Text
	}
	return out
}

// definiteSessionFailure: the append never applied. A 409 is not definite: the transaction's proposal may have
// applied on a first try whose answer was lost before its retries conflicted.
func definiteSessionFailure(err error) bool {
	if _, def := classify(err); !def {
		return false
	}
	var ae *client.APIError
	return !errors.As(err, &ae) || ae.Status != 409
}

// finalSessionReads reads every session the workload appended to through every member, as client `client`.
func finalSessionReads(w *sessionWorkload, client int) error {
	nodes := w.c.nodes()
	sessions := int((w.l.appends.Load() + sessionAppends - 1) / sessionAppends)
	return parallel(sessions*len(nodes), func(i int) error {
		user, run := w.session(int64(i/len(nodes)) * sessionAppends)
		for attempt := 0; attempt < 20; attempt++ {
			if e := readSession(nodes[(i+attempt)%len(nodes)], w.l, client, user, run); e != nil {
				w.l.record(e)
				return nil
			}
			time.Sleep(250 * time.Millisecond)
		}
		return fmt.Errorf("final read of session %s/%s never succeeded", user, run)
	})
}

// checkSessions checks every answered session against the appends: it returns the number of answers checked,
// the violations (an answer missing an append acknowledged before its call, or holding one that definitely
// failed) and the acknowledged appends missing from the final reads (client `final`).
func checkSessions(t *testing.T, l *sessionLog, final int) (ops, violations, lost int) {
	events := l.snapshot()
	byRun := map[string][]*sessionEvent{}
	for _, e := range events {
		if e.text != "" {
			byRun[e.run] = append(byRun[e.run], e)
		}
	}
	missing := map[*sessionEvent]bool{}
	for _, e := range events {
		if !e.answered {
			continue
		}
		ops++
		held := map[string]bool{}
		for _, s := range e.window {
			held[s] = true
		}
		bad := false
		for _, a := range byRun[e.run] {
			switch {
			case a.acked && a.ret < e.call && !held[a.text]:
				bad = true
				t.Logf("VIOLATION: session %s/%s read by client %d at %v misses %q, acknowledged at %v",
					e.user, e.run, e.client, e.call, a.text, a.ret)
				if e.client == final {
					missing[a] = true
				}
			case a.failed && held[a.text]:
				bad = true
				t.Logf("VIOLATION: session %s/%s read by client %d at %v holds %q, which failed",
					e.user, e.run, e.client, e.call, a.text)
			}
		}
		if bad {
			violations++
		}
	}
	return ops, violations, len(missing)
}
