package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"syscall"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/client"
	"github.com/memcluster/memcluster/memory"
)

// event is one recorded operation.
type event struct {
	client    int
	in        input
	out       output
	call, ret time.Duration // since the history's origin; ret = -1 when indeterminate
	failed    bool          // definitely did not happen (connection refused, 4xx other than 404): not in the history
}

// history collects a test's operations, and the ids of acknowledged puts that later operations refer to.
type history struct {
	origin time.Time
	mu     sync.Mutex
	events []*event
	ids    map[string][]string // user -> ids of acknowledged puts (the last few)
}

func newHistory() *history { return &history{origin: time.Now(), ids: map[string][]string{}} }

func (h *history) now() time.Duration { return time.Since(h.origin) }

func (h *history) record(e *event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
	if e.in.Kind == opPut && e.ret >= 0 && !e.failed {
		l := append(h.ids[e.in.User], e.in.ID)
		if len(l) > 6 {
			l = l[len(l)-6:]
		}
		h.ids[e.in.User] = l
	}
}

func (h *history) snapshot() []*event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*event(nil), h.events...)
}

// acked returns every acknowledged put's user and id, in history order.
func (h *history) acked() []userID {
	var out []userID
	seen := map[string]bool{}
	for _, e := range h.snapshot() {
		if e.in.Kind == opPut && !e.failed && !seen[e.in.ID] {
			seen[e.in.ID] = true
			out = append(out, userID{e.in.User, e.in.ID})
		}
	}
	return out
}

type userID struct{ user, id string }

// mix is the workload's share of puts and gets in percent; deletes take the rest.
type mix struct{ put, get int }

// workload runs clients until ctx ends, each with its own seeded generator; they stop at ctx's end.
type workload struct {
	h       *history
	c       *testCluster
	users   []string
	clients int
	seed    uint64
	mix     mix
}

func (w *workload) run(ctx context.Context) *sync.WaitGroup {
	var wg sync.WaitGroup
	for i := 0; i < w.clients; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(w.seed, uint64(i)+1))
			for n := 0; ctx.Err() == nil; n++ {
				// Any node that is up takes any request (it forwards to the shard leader).
				up := w.c.up()
				if len(up) == 0 {
					time.Sleep(50 * time.Millisecond)
					continue
				}
				e := w.op(rng, up[rng.IntN(len(up))], i, n)
				w.h.record(e)
				if e.failed || e.ret < 0 {
					time.Sleep(time.Duration(20+rng.IntN(80)) * time.Millisecond) // back off a little
				}
			}
		}(i)
	}
	return &wg
}

// op performs one random operation through nd.
func (w *workload) op(rng *rand.Rand, nd *node, c, n int) *event {
	user := w.users[rng.IntN(len(w.users))]
	w.h.mu.Lock()
	known := w.h.ids[user]
	id := ""
	if len(known) > 0 {
		id = known[rng.IntN(len(known))]
	}
	w.h.mu.Unlock()
	p := rng.IntN(100)
	e := &event{client: c}
	bg := context.Background() // the client's own timeout bounds each call; never cut one short
	switch {
	case p < w.mix.put || id == "":
		text := fmt.Sprintf("s%d c%d op%d", w.seed, c, n)
		e.in = input{Kind: opPut, User: user, Text: text}
		e.call = w.h.now()
		m, err := nd.client.Put(bg, apiv1.PutRequest{UserID: user, Text: text})
		e.ret = w.h.now()
		if err != nil {
			_, def := classify(err)
			// An indeterminate put has an id nobody knows: no later operation can refer to it, so leaving it out
			// of the history loses nothing.
			e.failed, e.out.Unknown = true, !def
		} else {
			e.in.ID = m.ID
		}
	case p < w.mix.put+w.mix.get:
		e.in = input{Kind: opGet, User: user, ID: id}
		e.call = w.h.now()
		m, err := nd.client.Get(bg, user, id, false)
		e.ret = w.h.now()
		if err == nil {
			e.out = output{Found: true, Text: m.Text}
		} else if nf, _ := classify(err); nf {
			e.out = output{Found: false}
		} else {
			e.failed = true // a read that failed has no effect
		}
	default:
		e.in = input{Kind: opDelete, User: user, ID: id}
		e.call = w.h.now()
		err := nd.client.Delete(bg, user, id)
		e.ret = w.h.now()
		if err == nil {
			e.out = output{Found: true}
		} else if nf, def := classify(err); nf {
			e.out = output{Found: false}
		} else if def {
			e.failed = true
		} else {
			e.out, e.ret = output{Unknown: true}, -1
		}
	}
	return e
}

// classify maps an error to: definite failure (did not apply), not found, or indeterminate.
func classify(err error) (notFound, definiteFail bool) {
	if errors.Is(err, memory.ErrNotFound) {
		return true, false
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return false, true // the request never reached a node
	}
	var ae *client.APIError
	if errors.As(err, &ae) && ae.Status >= 400 && ae.Status < 500 && ae.Status != 408 && ae.Status != 429 {
		return false, true
	}
	return false, false
}
