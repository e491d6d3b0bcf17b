package storage

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// writePressure decides whether the node should take new writes now or hold them until Pebble's compactions
// catch up. Pebble stops every write on the node once level 0 holds L0StopWritesThreshold sublevels (12) or its
// memtables queue up: every shard's raft appends and applies wait together, for seconds under a bulk load, and
// the followers' appends then outlast the leaders' RPC timeouts. Refusing new writes a little before that point,
// while what was admitted still completes, keeps the node serving: a refused write was never proposed, so its
// client may send it again (Retry-After), where a write caught in a stall ends as outcome unknown.
//
// The node is overloaded from the moment level 0 reaches high sublevels, or a write stall begins, until level
// 0 is back at low or fewer and no stall is under way (the gap keeps it from flapping on every flush).
type writePressure struct {
	high, low int

	mu        sync.Mutex
	sublevels int
	stalled   bool
	over      bool
	clear     chan struct{} // closed when the node stops being overloaded; replaced when it starts again
}

// pressureInterval is how often level 0 is read: a flush adds about one sublevel, and flushes come seconds
// apart under load, so a tenth of a second sees each one in time.
const pressureInterval = 100 * time.Millisecond

func newWritePressure(high int) *writePressure {
	p := &writePressure{high: high, low: max(high-2, 1), clear: make(chan struct{})}
	close(p.clear)
	return p
}

// update records level 0's sublevels and whether a write stall is under way.
func (p *writePressure) update(sublevels int, stalled bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sublevels, p.stalled = sublevels, stalled
	over := stalled || sublevels >= p.high || (p.over && sublevels > p.low)
	switch {
	case over && !p.over:
		p.clear = make(chan struct{})
	case !over && p.over:
		close(p.clear)
	}
	p.over = over
}

// urgent reports whether level 0 is within the gap of the overload, or the node is overloaded: compactions
// are then what every write waits for. Nil answers false.
func (p *writePressure) urgent() bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.over || p.sublevels >= p.low
}

func (p *writePressure) setStalled(stalled bool) {
	p.mu.Lock()
	n := p.sublevels
	p.mu.Unlock()
	p.update(n, stalled)
}

// state returns nil while writes are welcome, else the error that says why and a channel closed when they are
// welcome again.
func (p *writePressure) state() (error, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.over {
		return nil, nil
	}
	if p.stalled {
		return fmt.Errorf("%w: writes stalled until flushes and compactions catch up", ErrOverloaded), p.clear
	}
	return fmt.Errorf("%w: level 0 holds %d sublevels, writes are taken again at %d", ErrOverloaded,
		p.sublevels, p.low), p.clear
}

// WaitWritable returns nil at once while the node takes new writes. While its storage is overloaded it waits,
// up to wait or the context's end, for compactions to catch up, and then returns an error wrapping
// ErrOverloaded that names the cause. A caller refuses the write on that error, before proposing it.
func (d *DB) WaitWritable(ctx context.Context, wait time.Duration) error {
	if d.pressure == nil {
		return nil
	}
	err, clear := d.pressure.state()
	if err == nil {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-clear:
		return nil
	case <-t.C:
	case <-ctx.Done():
	}
	if err, _ := d.pressure.state(); err != nil {
		return err
	}
	return nil
}

// watchPressure reads level 0 until the DB closes.
func (d *DB) watchPressure() {
	defer close(d.pressureDone)
	t := time.NewTicker(pressureInterval)
	defer t.Stop()
	for {
		select {
		case <-d.stopPressure:
			return
		case <-t.C:
		}
		n := int(d.db.Metrics().Levels[0].Sublevels)
		d.pressure.update(n, d.health.stalls.underWay())
	}
}
