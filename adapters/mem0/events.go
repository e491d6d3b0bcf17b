package mem0

import (
	"crypto/sha256"
	"sync"
	"time"

	"github.com/google/uuid"
)

// events keeps the answers of recent adds for GET /v1/event/{id}/. An add completes before it is answered,
// so an event is born SUCCEEDED; the platform's clients poll for it all the same. Events live in this node's
// memory only (DESIGN.md), bounded in number and age, and each is visible only to the credential that made it.
type events struct {
	mu    sync.Mutex
	max   int
	ttl   time.Duration
	now   func() time.Time
	byID  map[string]event
	order []string // insertion order, oldest first
}

type event struct {
	owner   [32]byte // sha256 of the caller's credential
	created time.Time
	body    eventBody
}

// eventBody is the answer of GET /v1/event/{id}/.
type eventBody struct {
	ID          string    `json:"id"`
	EventType   string    `json:"event_type"`
	Status      string    `json:"status"`
	Payload     any       `json:"payload"`
	Results     []any     `json:"results"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	StartedAt   time.Time `json:"started_at"`
	CompletedAt time.Time `json:"completed_at"`
	Latency     float64   `json:"latency"`
}

func newEvents(max int, ttl time.Duration, now func() time.Time) *events {
	return &events{max: max, ttl: ttl, now: now, byID: map[string]event{}}
}

// add records a finished event and returns its id.
func (e *events) add(key string, typ string, payload any, results []any, started time.Time) string {
	id := uuid.NewString()
	done := e.now()
	body := eventBody{ID: id, EventType: typ, Status: "SUCCEEDED", Payload: payload, Results: results,
		CreatedAt: started, UpdatedAt: done, StartedAt: started, CompletedAt: done,
		Latency: float64(done.Sub(started).Microseconds()) / 1000}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.expire(done)
	for len(e.order) >= e.max {
		delete(e.byID, e.order[0])
		e.order = e.order[1:]
	}
	e.byID[id] = event{owner: sha256.Sum256([]byte(key)), created: done, body: body}
	e.order = append(e.order, id)
	return id
}

// get returns the event id if the credential key made it.
func (e *events) get(key, id string) (eventBody, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.expire(e.now())
	ev, ok := e.byID[id]
	if !ok || ev.owner != sha256.Sum256([]byte(key)) {
		return eventBody{}, false
	}
	return ev.body, true
}

func (e *events) expire(now time.Time) {
	for len(e.order) > 0 && now.Sub(e.byID[e.order[0]].created) > e.ttl {
		delete(e.byID, e.order[0])
		e.order = e.order[1:]
	}
}
