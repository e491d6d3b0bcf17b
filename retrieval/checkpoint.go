package retrieval

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memcluster/memcluster/memory"
)

// CheckpointPolicy says when a shard replica writes its checkpoint (checkpoint_format.go) in the background.
// A checkpoint is due once memories changed since the last one and at least MinInterval passed, and either the
// shard's applied index moved Entries past it, the changes reach Fraction of the memories held, or MaxAge
// passed. A clean close writes one whenever memories changed.
type CheckpointPolicy struct {
	Check       time.Duration // how often to look; default 5 s
	MinInterval time.Duration // default 30 s
	Entries     uint64        // default 4,096: half of raft's trailing log, so the tail the next open reads is kept
	Fraction    float64       // default 0.1
	MaxAge      time.Duration // default 10 min
}

func (p CheckpointPolicy) withDefaults() CheckpointPolicy {
	p.Check = cmp.Or(p.Check, 5*time.Second)
	p.MinInterval = cmp.Or(p.MinInterval, 30*time.Second)
	p.Entries = cmp.Or(p.Entries, 4096)
	p.Fraction = cmp.Or(p.Fraction, 0.1)
	p.MaxAge = cmp.Or(p.MaxAge, 10*time.Minute)
	return p
}

// checkpointer keeps a replica's checkpoint file: when it is due, its writes, and its removal on a reset.
type checkpointer struct {
	path   string
	policy CheckpointPolicy

	mu        sync.Mutex // held by a write from its capture to its rename; a reset's removal waits for it
	resetting bool       // between a reset's removal and the end of its reload: no write
	at        uint64     // applied index of the file on disk; 0: none
	written   time.Time
	changes   atomic.Int64 // memories put or deleted since the file's capture
	stop      chan struct{}
	done      chan struct{}
}

func newCheckpointer(path string, p CheckpointPolicy) *checkpointer {
	return &checkpointer{path: path, policy: p.withDefaults(), stop: make(chan struct{}), done: make(chan struct{})}
}

// run writes the checkpoint whenever it is due, until close, each in a turn of the node's Indexers.
func (c *checkpointer) run(s *ShardIndex) {
	defer close(c.done)
	t := time.NewTicker(c.policy.Check)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		if c.due(s.indexed.Load(), s.Memories(), time.Now()) {
			if err := s.checkpointIn(s.indexers, c.stop); err != nil {
				s.log.Warn("write index checkpoint", "err", err)
			}
		}
	}
}

func (c *checkpointer) due(indexed uint64, memories int, now time.Time) bool {
	c.mu.Lock()
	at, written := c.at, c.written
	c.mu.Unlock()
	changes := c.changes.Load()
	p := c.policy
	switch {
	case changes == 0 && (at != 0 || memories == 0):
		return false // nothing new, or nothing to keep
	case now.Sub(written) < p.MinInterval:
		return false
	case at == 0, indexed >= at+p.Entries:
		return true
	}
	return float64(changes) >= p.Fraction*float64(memories) || now.Sub(written) >= p.MaxAge
}

// close stops the background writes.
func (c *checkpointer) close() {
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	<-c.done
}

// remove deletes the checkpoint, durably: the shard's records were replaced (a snapshot restore), and no write
// begun before stays valid. No write lands until resume: the reload in between is half done.
func (c *checkpointer) remove() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at, c.resetting = 0, true
	if err := os.Remove(c.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return syncDir(filepath.Dir(c.path))
}

// resume lets writes land again once a reset's reload is complete.
func (c *checkpointer) resume() {
	c.mu.Lock()
	c.resetting = false
	c.mu.Unlock()
}

// writeCheckpoint writes the replica's vectors, attributes and timelines to the checkpoint file at once, in
// no turn (a clean close, tests).
func (s *ShardIndex) writeCheckpoint() error { return s.checkpointIn(nil, nil) }

// checkpointIn writes the replica's vectors, attributes and timelines to the checkpoint file, encoding them in a
// turn of gate (at once when gate is nil) and syncing the file after the turn: the turn bounds the CPU spent
// encoding, and the fsync (tens of megabytes at a million memories) need not hold back the node's full-text
// batches. Nothing is written when stop closes before the turn. It runs beside applies and searches: the
// applied index is read in the turn before anything is captured, so every change up to it is in the file, and a
// change after it that the capture caught in part is re-read from the records by the next open (it is in the
// raft log's tail after the file's index).
func (s *ShardIndex) checkpointIn(gate *Indexers, stop <-chan struct{}) error {
	c := s.ckpt
	tmp := c.path + ".tmp"
	var (
		f               *os.File
		size, changes   int64
		at, epoch       uint64
		start           time.Time
		locked, encoded bool
		err             error
	)
	// The lock is taken in the turn, as a reset's removal takes it without one, and held until the file is in
	// place, so that no reset comes between the encoding and the rename.
	gate.inTurn(stop, func() {
		c.mu.Lock()
		locked = true
		if c.resetting {
			return
		}
		encoded, start = true, time.Now()
		at, epoch, changes = s.indexed.Load(), s.epoch.Load(), c.changes.Load()
		f, size, err = s.encodeCheckpointFile(tmp, at, epoch)
	})
	if !locked {
		return nil
	}
	defer c.mu.Unlock()
	if !encoded {
		return nil
	}
	if err = installCheckpoint(f, tmp, c.path, err); err != nil {
		return fmt.Errorf("checkpoint of shard %d: %w", s.shard, err)
	}
	c.at, c.written = at, time.Now()
	c.changes.Add(-changes)
	s.indexers.wroteCheckpoint(c.written.Sub(start), size)
	return nil
}

// installCheckpoint syncs and closes f, the encoded checkpoint at tmp, and renames it to path, durably; after
// encErr (the encoding's error) or its own it removes tmp and returns the error.
func installCheckpoint(f *os.File, tmp, path string, encErr error) error {
	err := encErr
	if err == nil {
		err = f.Sync()
	}
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// encodeCheckpointFile writes the checkpoint at applied index at to a new file at path, not synced, and returns
// the open file (also on an error after its creation, for the caller to close) and its size.
func (s *ShardIndex) encodeCheckpointFile(path string, at, epoch uint64) (*os.File, int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, 0, err
	}
	s.mu.RLock()
	users := make([]string, 0, len(s.tl.users))
	for u := range s.tl.users {
		users = append(users, u)
	}
	s.mu.RUnlock()
	slices.Sort(users)
	w := newCkptWriter(f)
	if err := w.header(checkpointHeader{shard: s.shard, applied: at, epoch: epoch, model: s.model, dim: s.vec.Dim(),
		users: len(users)}); err != nil {
		return f, 0, err
	}
	for _, u := range users {
		if err := s.writeUser(w, u); err != nil {
			return f, 0, err
		}
	}
	if err := w.finish(); err != nil {
		return f, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		return f, 0, err
	}
	return f, st.Size(), nil
}

// writeUser writes one user's memories under the read lock, then its vectors under the namespace's read lock.
// Applies wait meanwhile, and so do searches that queue behind a waiting apply (sync.RWMutex): for a user with
// 100,000 memories that is tens of milliseconds.
func (s *ShardIndex) writeUser(w *ckptWriter, user string) error {
	w.str(user) // flushed with the first memory or the list's end
	var err error
	s.mu.RLock()
	if tl := s.tl.users[user]; tl != nil {
		for _, id := range tl.ids {
			if a, e := s.attrs[id], tl.entries[id]; a != nil && e != nil {
				if err = w.memory(id, a, e); err != nil {
					break
				}
			}
		}
	}
	s.mu.RUnlock()
	if err != nil {
		return err
	}
	if err := w.end(); err != nil {
		return err
	}
	s.vec.RowsHalf(user, func(id string, half []uint16, scale float32) {
		if err == nil {
			err = w.vector(id, half, scale)
		}
	})
	if err != nil {
		return err
	}
	return w.end()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// loadCheckpoint fills the vectors, attributes and timelines from the checkpoint file and then, from the records,
// the memories the raft log entries after its index touched. It reports why it could not (no file, another
// model, a log that cannot vouch for the tail…), having loaded nothing, or the tail's size.
func (s *ShardIndex) loadCheckpoint(applied, term uint64) (tail int, why string, err error) {
	if s.ckpt == nil {
		return 0, "no checkpoint kept", nil
	}
	data, err := os.ReadFile(s.ckpt.path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, "no checkpoint", nil
	} else if err != nil {
		return 0, "checkpoint unreadable: " + err.Error(), nil
	}
	r, err := newCkptReader(data)
	if err != nil {
		return 0, err.Error(), nil
	}
	h := r.header()
	switch {
	case r.err != nil:
		return 0, r.err.Error(), nil
	case h.shard != s.shard || h.model != s.model || h.dim != s.vec.Dim():
		return 0, fmt.Sprintf("checkpoint of shard %d, model %q, dim %d", h.shard, h.model, h.dim), nil
	case h.epoch != s.epoch.Load():
		return 0, fmt.Sprintf("checkpoint of restore epoch %d, records in %d", h.epoch, s.epoch.Load()), nil
	case h.applied > applied:
		return 0, fmt.Sprintf("checkpoint at %d, records at %d", h.applied, applied), nil
	}
	t := &touched{ids: map[string]string{}, users: map[string]bool{}}
	if h.applied < applied {
		if s.tail == nil {
			return 0, "no raft log reader", nil
		}
		ok, err := s.tail.Tail(h.applied, applied, term, t.note)
		switch {
		case err != nil:
			return 0, "", err
		case !ok:
			return 0, fmt.Sprintf("the raft log cannot vouch for entries %d..%d", h.applied+1, applied), nil
		case t.whole:
			return 0, "a split in the tail", nil
		}
	}
	var users []string
	if err := s.readCheckpoint(r, h, &users); err != nil {
		s.clearLoaded(users)
		return 0, err.Error(), nil
	}
	if err := s.applyTouched(t); err != nil {
		s.clearLoaded(append(users, slices.Collect(maps.Keys(t.users))...))
		return 0, "", err
	}
	s.ckpt.mu.Lock()
	s.ckpt.at, s.ckpt.written = h.applied, time.Now()
	s.ckpt.mu.Unlock()
	s.ckpt.changes.Store(int64(len(t.ids) + len(t.users)))
	return len(t.ids), "", nil
}

// readCheckpoint loads every user of the checkpoint, listing each in users as it starts on it.
// Each user's vectors are handed to the vector index (which computes their int8 copy, and for version 1 encodes
// them first) on another goroutine while the next users' attributes are read, so an open uses two cores.
func (s *ShardIndex) readCheckpoint(r *ckptReader, h checkpointHeader, users *[]string) (err error) {
	s.mu.Lock()
	if len(s.attrs) == 0 && h.dim > 0 {
		// Every memory with a vector takes its row's bytes of the file: room for them all, without rehashing.
		row := 2*h.dim + 4
		if r.version == checkpointFloats {
			row = 4 * h.dim
		}
		s.attrs = make(map[string]*attrs, len(r.b)/row)
	}
	s.mu.Unlock()
	loads := make(chan vectorLoad, 4)
	loaded := make(chan error, 1)
	go func() {
		var first error
		for l := range loads {
			if first == nil {
				first = l.into(s.vec)
			}
		}
		loaded <- first
	}()
	defer func() {
		close(loads)
		if lerr := <-loaded; err == nil {
			err = lerr
		}
	}()
	known := map[string]string{} // this user's memory ids, for its vectors to share
	for range h.users {
		user := r.str()
		*users = append(*users, user)
		n := 0
		clear(known)
		s.mu.Lock()
		for {
			id, a, e := r.memory(user)
			if id == "" {
				break
			}
			n++
			known[id] = id
			s.attrs[id] = a
			if a.retired || a.archive {
				s.anyHidden.Store(true)
			}
			s.tl.noteEntryLocked(user, id, e)
		}
		s.mu.Unlock()
		l := readVectors(r, h.dim, n, known)
		if r.err != nil {
			return r.err
		}
		l.user = user
		loads <- l
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%w: %d bytes after the last user", errCheckpointCorrupt, len(r.b))
	}
	return nil
}

// vectorLoad is one user's vectors read from a checkpoint: rows as the index stores them, or (version 1) float32
// vectors in slab.
type vectorLoad struct {
	user   string
	ids    []string
	half   []uint16
	scales []float32
	slab   []float32
}

// readVectors reads a user's list of vectors, n of them expected, sized for them so the index takes the slices
// as they are.
func readVectors(r *ckptReader, dim, n int, known map[string]string) vectorLoad {
	l := vectorLoad{ids: make([]string, 0, n)}
	if r.version == checkpointFloats {
		l.slab = make([]float32, 0, n*dim)
		for {
			var id string
			if id, l.slab = r.vector(dim, l.slab, known); id == "" {
				return l
			}
			l.ids = append(l.ids, id)
		}
	}
	l.half, l.scales = make([]uint16, 0, n*dim), make([]float32, 0, n)
	for {
		id, half, scale := r.halfRow(dim, l.half, known)
		if id == "" {
			return l
		}
		l.ids, l.half, l.scales = append(l.ids, id), half, append(l.scales, scale)
	}
}

// into hands the vectors to the index.
func (l vectorLoad) into(vec VectorIndex) error {
	if l.slab != nil {
		return vec.Load(l.user, l.ids, l.slab)
	}
	return vec.LoadHalf(l.user, l.ids, l.half, l.scales)
}

// applyTouched brings what a checkpoint loaded up to the records for what the tail after it touched: a forgotten
// (or imported) user is dropped and read again, a memory read again or removed.
func (s *ShardIndex) applyTouched(t *touched) error {
	for user := range t.users {
		s.dropUser(user)
		if err := s.db.ScanUser(s.shard, user, func(m memory.Memory) bool {
			s.indexVector(m)
			return true
		}); err != nil {
			return err
		}
	}
	for id, user := range t.ids {
		m, err := s.db.GetMemory(s.shard, user, id)
		switch {
		case errors.Is(err, memory.ErrNotFound):
			s.forget(user, id)
		case err != nil:
			return err
		default:
			s.indexVector(m) // which drops the vector when the new embedding is of another model
		}
	}
	return nil
}

func (s *ShardIndex) forget(user, id string) {
	s.mu.Lock()
	delete(s.attrs, id)
	s.tl.forgetLocked(user, id)
	s.mu.Unlock()
	s.vec.Delete(user, id)
}

func (s *ShardIndex) dropUser(user string) {
	s.mu.Lock()
	if tl := s.tl.users[user]; tl != nil {
		for _, id := range tl.ids {
			delete(s.attrs, id)
		}
		delete(s.tl.users, user)
	}
	s.mu.Unlock()
	s.vec.DropNamespace(user)
}

// clearLoaded empties what a failed checkpoint load left, before the records are read instead: users are those it
// started on, whose vectors may be in even where no memory is.
func (s *ShardIndex) clearLoaded(users []string) {
	s.mu.Lock()
	for u := range s.tl.users {
		users = append(users, u)
	}
	s.attrs, s.tl = map[string]*attrs{}, newTimelines()
	s.mu.Unlock()
	for _, u := range users {
		s.vec.DropNamespace(u)
	}
}
