package llm

import (
	"sync"
	"time"
)

// breaker pauses calls after threshold consecutive failures. After the cooldown the next
// calls go through again; one more failure pauses them again at once, one success closes it.
type breaker struct {
	threshold int // < 0: never pause
	cooldown  time.Duration
	now       func() time.Time

	mu        sync.Mutex
	fails     int
	openUntil time.Time
}

func (b *breaker) allow() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.now().Before(b.openUntil)
}

// record notes an outcome and reports whether this failure paused calls.
func (b *breaker) record(ok bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ok {
		b.fails = 0
		return false
	}
	b.fails++
	if b.threshold < 0 || b.fails < b.threshold {
		return false
	}
	b.openUntil = b.now().Add(b.cooldown)
	return true
}
