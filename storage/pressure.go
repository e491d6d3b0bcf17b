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
// The node is overloaded from the moment level 0 reaches high sublevels until it is back at low or fewer (the
// gap keeps it from flapping on every flush), and while a write stall is under way. The watcher owns the
// sublevels and Pebble's stall events own the count of stalls under way (two writers may each be held), so
// neither overwrites what the other saw. A backlog of work deferred above the store (SetBacklog) overloads the
// node too, with its own gap.
type writePressure struct {
	high, low int

	mu        sync.Mutex
	sublevels int
	stalls    int  // write stalls under way
	deep      bool // level 0 reached high and has not come back to low
	over      bool
	clear     chan struct{} // closed when the node stops being overloaded; replaced when it starts again

	// A backlog of deferred work above the store (SetBacklog): behind from backlogHigh until it is back at
	// three quarters of it.
	backlogName string
	backlogRead func() int64
	backlogHigh int64
	backlogGen  uint64 // bumped by each SetBacklog, so a reading taken across one is dropped
	backlog     int64
	behind      bool
}

// pressureInterval is how often level 0 is read: a flush adds about one sublevel, and flushes come seconds
// apart under load, so a tenth of a second sees each one in time.
const pressureInterval = 100 * time.Millisecond

func newWritePressure(high int) *writePressure {
	p := &writePressure{high: high, low: max(high-2, 1), clear: make(chan struct{})}
	close(p.clear)
	return p
}

// update records level 0's sublevels.
func (p *writePressure) update(sublevels int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sublevels = sublevels
	p.deep = sublevels >= p.high || p.deep && sublevels > p.low
	p.settle()
}

// updateBacklog reads the backlog, when one is set.
func (p *writePressure) updateBacklog() {
	p.mu.Lock()
	read, gen := p.backlogRead, p.backlogGen
	p.mu.Unlock()
	if read == nil {
		return
	}
	n := read() // outside mu: the reader may take locks of its own
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.backlogGen != gen {
		return
	}
	p.backlog = n
	p.behind = n >= p.backlogHigh || p.behind && n > p.backlogLow()
	p.settle()
}

// backlogLow is where a backlog that reached backlogHigh stops holding writes; the caller holds mu.
func (p *writePressure) backlogLow() int64 { return p.backlogHigh - p.backlogHigh/4 }

// stall records a write stall's beginning (+1) or end (-1).
func (p *writePressure) stall(delta int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalls = max(p.stalls+delta, 0)
	p.settle()
}

// settle sets over from deep and the stalls, and opens or closes the gate on a change; the caller holds mu.
func (p *writePressure) settle() {
	over := p.storeOver() || p.behind
	switch {
	case over && !p.over:
		p.clear = make(chan struct{})
	case !over && p.over:
		close(p.clear)
	}
	p.over = over
}

// urgent reports whether level 0 is within the gap of the overload, or the store is overloaded (not only
// behind on a backlog): compactions are then what every write waits for. Nil answers false.
func (p *writePressure) urgent() bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.storeOver() || p.sublevels >= p.low
}

// storeOver reports whether the store itself holds writes (level 0 deep, or a stall), a backlog aside; the
// caller holds mu.
func (p *writePressure) storeOver() bool { return p.deep || p.stalls > 0 }

// state returns nil while writes are welcome, else the error that says why and a channel closed when they are
// welcome again. Without backlog, a backlog alone does not hold the write.
func (p *writePressure) state(backlog bool) (error, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.over || !backlog && !p.storeOver() {
		return nil, nil
	}
	if p.stalls > 0 {
		return fmt.Errorf("%w: writes stalled until flushes and compactions catch up", ErrOverloaded), p.clear
	}
	if p.behind && !p.deep {
		return fmt.Errorf("%w: %d %s wait; writes are taken again at %d", ErrOverloaded, p.backlog, p.backlogName,
			p.backlogLow()), p.clear
	}
	return fmt.Errorf("%w: level 0 holds %d sublevels, writes are taken again at %d", ErrOverloaded,
		p.sublevels, p.low), p.clear
}

// WaitWritable returns nil at once while the node takes new writes. While its storage is overloaded it waits,
// up to wait or the context's end, for compactions to catch up, and then returns an error wrapping
// ErrOverloaded that names the cause (or the context's error if it ended as the node cleared). A caller refuses
// the write on that error, before proposing it.
func (d *DB) WaitWritable(ctx context.Context, wait time.Duration) error {
	return d.waitWritable(ctx, wait, true)
}

// WaitWritableFor is WaitWritable for the encoded command cmd: one that adds no work for the full-text indexes
// (AddsIndexWork: a split, a prune) is not held by a backlog (SetBacklog), only by the store itself.
func (d *DB) WaitWritableFor(ctx context.Context, wait time.Duration, cmd []byte) error {
	return d.waitWritable(ctx, wait, AddsIndexWork(cmd))
}

func (d *DB) waitWritable(ctx context.Context, wait time.Duration, backlog bool) error {
	p := d.health.pressure
	if p == nil {
		return nil
	}
	err, clear := p.state(backlog)
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
	if err, _ := p.state(backlog); err != nil {
		return err
	}
	return ctx.Err() // nil when the wait ran out just as the gate opened
}

// SetBacklog makes a backlog of work the node defers past its writes, which the store does not see, a cause of
// overload too: read is polled with level 0, and from high until the backlog is back at three quarters of it new
// writes are held and refused as for level 0, the error naming the count and what (memnode: its replicas'
// changes waiting for their full-text indexes, each held in memory). With the gate off (OverloadSublevels
// negative) nothing is polled. A later call replaces the backlog; high ≤ 0 or a nil read removes it.
func (d *DB) SetBacklog(what string, read func() int64, high int64) {
	p := d.health.pressure
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if high <= 0 {
		read = nil
	}
	p.backlogName, p.backlogRead, p.backlogHigh = what, read, high
	p.backlogGen++
	p.backlog, p.behind = 0, false
	p.settle()
}

// watchPressure reads level 0, and the backlog when one is set, until the DB closes.
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
		d.health.pressure.update(int(d.db.Metrics().Levels[0].Sublevels))
		d.health.pressure.updateBacklog()
	}
}
