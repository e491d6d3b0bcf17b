package retrieval

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memcluster/memcluster/fulltext"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
	"github.com/memcluster/memcluster/vector"
)

// VectorIndex is what retrieval needs of a vector index (vector.Index satisfies it; an HNSW index could too).
type VectorIndex interface {
	Upsert(ns, id string, vec []float32) error
	UpsertMany(ns string, ids []string, vecs [][]float32) error
	// Load stores slab's dim-sized vectors under ids (a checkpoint of float32 vectors); LoadHalf stores rows as
	// RowsHalf hands them out, taking them as its own when ns is empty (a checkpoint's load).
	Load(ns string, ids []string, slab []float32) error
	LoadHalf(ns string, ids []string, half []uint16, scales []float32) error
	Delete(ns, id string) bool
	DropNamespace(ns string)
	// RowsHalf calls fn with every row of ns as stored, under the namespace's read lock (a checkpoint is written
	// from it).
	RowsHalf(ns string, fn func(id string, half []uint16, scale float32))
	Search(ns string, q []float32, k int, filter func(id string) bool) []vector.Hit
	Score(ns, id string, q []float32) (float32, bool)
	Dim() int
	Len() int // vectors held
	// Close takes the vectors off the node's count of vector bytes (the replica's indexes are closed).
	Close()
}

// TextIndex is what retrieval needs of a full-text index (fulltext.Index satisfies it).
type TextIndex interface {
	ApplyWithMarkers(put []fulltext.Doc, del []string, markers map[string][]byte) error
	SearchContext(ctx context.Context, q fulltext.Query) ([]fulltext.Hit, error)
	Marker(key string) ([]byte, error)
	UserIDs(user string) ([]string, error)
	IDs() ([]string, error)
	Close() error
}

// Records is what retrieval needs of the shard's durable state.
type Records interface {
	GetMemory(shard uint32, user, id string) (memory.Memory, error)
	// GetMemoryWithoutEmbedding is GetMemory with a nil Embedding, not decoded: for a search's answers.
	GetMemoryWithoutEmbedding(shard uint32, user, id string) (memory.Memory, error)
	ScanShard(shard uint32, fn func(memory.Memory) bool) error
	ScanUser(shard uint32, user string, fn func(memory.Memory) bool) error
	Applied(shard uint32) (index, term uint64, err error)
	// RestoreEpoch counts the snapshot restores that replaced the shard's records: indexes built in another
	// epoch are rebuilt, whatever their applied index says.
	RestoreEpoch(shard uint32) (uint64, error)
}

const (
	markerApplied = "applied"
	markerEpoch   = "restore_epoch"
)

// attrs is the in-memory copy of what vector-side filters test, so filtering does not touch Pebble.
type attrs struct {
	user       string
	typ        memory.Type
	agent, run string
	occurred   time.Time
	tags       []string
	shared     bool // visible to group sessions
	retired    bool // a superseded or retracted fact
	archive    bool // an archive-index entry (cold memories behind it)
}

// ShardIndex holds one shard replica's derived indexes: vectors in memory, bleve on disk. It is fed by the
// state machine (storage.Indexer) and rebuilt from Pebble when missing or behind.
type ShardIndex struct {
	shard uint32
	db    Records
	vec   VectorIndex
	text  TextIndex
	model string // embedding fingerprint: only vectors of this model are searchable
	tail  TailReader
	log   *slog.Logger
	// indexers gives the feeder turns for its batches, and the checkpointer for its writes (nil: none).
	indexers *Indexers

	mu    sync.RWMutex
	attrs map[string]*attrs
	tl    *timelines // per-user order, actors and names, for the pipeline mode (timeline.go)
	feed  *textFeeder
	ckpt  *checkpointer // nil: no checkpoint kept
	// indexed is the applied index the vectors, attributes and timelines reflect every change up to; epoch the
	// records' restore epoch they were loaded in.
	indexed atomic.Uint64
	epoch   atomic.Uint64
	// anyHidden is set once a memory hidden from default searches (a retired fact, an archive entry) is indexed:
	// until then searches skip the per-hit filter.
	anyHidden atomic.Bool
}

// ShardIndexOptions configures OpenShardIndexWith. Shard, Records, Vectors and Text are required.
type ShardIndexOptions struct {
	Shard   uint32
	Records Records
	Vectors VectorIndex
	Text    TextIndex
	Model   string       // embedding fingerprint: only vectors of this model are searchable
	Logger  *slog.Logger // default: discard
	// Tail, when set, lets an open whose full-text marker is behind the records re-feed only the memories that
	// the raft log entries in between touched. Without it, or when it cannot vouch for that range, bleve is
	// re-fed from every record of the shard.
	Tail TailReader
	// Checkpoint, when set, is the file where the replica keeps its vectors, attributes and timelines
	// (checkpoint.go), so an open reads them back and, from the records, only what the raft log's tail after
	// them touched, instead of every record. It needs Tail to use a checkpoint behind the records.
	Checkpoint       string
	CheckpointPolicy CheckpointPolicy // when to write it; see CheckpointPolicy for the defaults
	// Indexers, shared by a node's shards, gives their feeders turns to build a full-text batch and their
	// checkpointers turns to write a checkpoint (Indexers). Default nil: every replica builds its batches and
	// writes its checkpoints whenever they are due.
	Indexers *Indexers
}

// OpenShardIndex wires the indexes of a shard and brings them up to date with its records (no raft log tail:
// a full-text index behind its records is re-fed in full).
func OpenShardIndex(shard uint32, db Records, vec VectorIndex, text TextIndex, model string, log *slog.Logger) (*ShardIndex, error) {
	return OpenShardIndexWith(ShardIndexOptions{Shard: shard, Records: db, Vectors: vec, Text: text, Model: model, Logger: log})
}

// OpenShardIndexWith wires the indexes of a shard and brings them up to date with its records.
func OpenShardIndexWith(o ShardIndexOptions) (*ShardIndex, error) {
	if o.Records == nil || o.Vectors == nil || o.Text == nil {
		return nil, fmt.Errorf("%w: shard index needs records, vectors and text", memory.ErrInvalid)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &ShardIndex{shard: o.Shard, db: o.Records, vec: o.Vectors, text: o.Text, model: o.Model, tail: o.Tail,
		indexers: o.Indexers, log: o.Logger.With("shard", o.Shard), attrs: map[string]*attrs{}, tl: newTimelines()}
	if o.Checkpoint != "" {
		s.ckpt = newCheckpointer(o.Checkpoint, o.CheckpointPolicy)
	}
	if err := s.load(); err != nil {
		return nil, fmt.Errorf("load indexes of shard %d: %w", o.Shard, err)
	}
	applied, _, err := s.db.Applied(s.shard)
	if err != nil {
		return nil, err
	}
	s.feed = newTextFeeder(s.text, applied, s.indexers, func(err error) {
		// Derived state: the marker stays behind, so the next open re-feeds bleve from Pebble.
		s.log.Error("full-text index update failed", "err", err)
	})
	if s.ckpt != nil {
		go s.ckpt.run(s)
	}
	return s, nil
}

// load fills the vector index and the attributes from Pebble, and brings bleve up to the shard's applied index
// when its marker is behind (a crash lost a suffix of its batches, or it is new): from the raft log's tail when
// the log vouches for it, else from every record.
func (s *ShardIndex) load() error {
	applied, term, err := s.db.Applied(s.shard)
	if err != nil {
		return err
	}
	epoch, err := s.db.RestoreEpoch(s.shard)
	if err != nil {
		return err
	}
	s.epoch.Store(epoch)
	mark, err := s.text.Marker(markerApplied)
	if err != nil {
		return err
	}
	textEpoch, err := s.text.Marker(markerEpoch)
	if err != nil {
		return err
	}
	start := time.Now()
	reindex := len(mark) != 8 || binary.BigEndian.Uint64(mark) != applied || decodeU64(textEpoch) != epoch
	how := "none"
	if reindex {
		n, why := 0, "no applied-index marker"
		if e := decodeU64(textEpoch); e != epoch {
			why = fmt.Sprintf("built in restore epoch %d, records in %d", e, epoch)
		} else if len(mark) == 8 {
			if n, why, err = s.refeedTail(binary.BigEndian.Uint64(mark), applied, term); err != nil {
				return err
			}
		}
		if reindex = why != ""; reindex {
			how = "full: " + why
		} else {
			how = fmt.Sprintf("tail of %d memories", n)
		}
	}
	vectors := "records"
	if !reindex {
		tail, why, err := s.loadCheckpoint(applied, term)
		if err != nil {
			return err
		}
		if why == "" {
			s.indexed.Store(applied)
			s.log.Info("indexes loaded", "memories", s.Memories(), "bleve_reindexed", how,
				"vectors", fmt.Sprintf("checkpoint, tail of %d memories", tail), "took", time.Since(start))
			return nil
		}
		vectors = "records: " + why
	}
	var docs []fulltext.Doc
	var vecs vectorBatch
	var feedErr error
	n := 0
	err = s.db.ScanShard(s.shard, func(m memory.Memory) bool {
		s.indexAttrs(m)
		s.loadVector(&vecs, m)
		n++
		if reindex {
			docs = append(docs, toDoc(m))
			if len(docs) == 2048 {
				feedErr = s.text.ApplyWithMarkers(docs, nil, nil)
				docs = docs[:0]
			}
		}
		return feedErr == nil
	})
	s.flushVectors(&vecs) // the memories whose attributes are in get their vectors, even when the scan failed
	if err = cmp.Or(err, feedErr); err != nil {
		return err
	}
	if reindex {
		if err := s.finishFullFeed(docs, applied, epoch); err != nil {
			return err
		}
	}
	s.indexed.Store(applied) // only once complete: a checkpoint claims every change up to it
	s.log.Info("indexes loaded", "memories", n, "bleve_reindexed", how, "vectors", vectors, "took", time.Since(start))
	return nil
}

// finishFullFeed writes the last records of a full re-feed and deletes every document the records no longer hold
// (a delete or forget whose batch the crash lost), with the applied-index marker.
// The restore epoch is written last: a crash before it leaves the index to be rebuilt again.
func (s *ShardIndex) finishFullFeed(docs []fulltext.Doc, applied, epoch uint64) error {
	ids, err := s.text.IDs()
	if err != nil {
		return err
	}
	s.mu.RLock()
	stale := slices.DeleteFunc(ids, func(id string) bool { return s.attrs[id] != nil })
	s.mu.RUnlock()
	if _, err := applyChunked(s.text, docs, stale, applied, nil); err != nil {
		return err
	}
	return s.text.ApplyWithMarkers(nil, nil, map[string][]byte{markerEpoch: u64(epoch)})
}

// decodeU64 reads a marker written by u64; an absent one is 0.
func decodeU64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// Index implements storage.Indexer.
func (s *ShardIndex) Index(applied uint64, puts []memory.Memory, dels []storage.Ref) {
	docs := make([]fulltext.Doc, 0, len(puts))
	for _, m := range puts {
		s.indexVector(m)
		docs = append(docs, toDoc(m))
	}
	ids := make([]string, 0, len(dels))
	s.mu.Lock()
	for _, d := range dels {
		delete(s.attrs, d.ID)
		s.tl.forgetLocked(d.UserID, d.ID)
		ids = append(ids, d.ID)
	}
	s.mu.Unlock()
	for _, d := range dels {
		s.vec.Delete(d.UserID, d.ID)
	}
	s.feed.add(applied, docs, ids)
	if s.ckpt != nil {
		s.ckpt.changes.Add(int64(len(puts) + len(dels)))
	}
	s.indexed.Store(applied)
}

// WaitIndexed returns once the full-text index reflects every change up to the shard's applied index idx.
func (s *ShardIndex) WaitIndexed(ctx context.Context, idx uint64) error {
	return s.feed.waitIndexed(ctx, idx)
}

// Reset implements storage.Indexer: the shard's records were replaced by a snapshot.
func (s *ShardIndex) Reset() {
	s.feed.close()
	if s.ckpt != nil {
		if err := s.ckpt.remove(); err != nil {
			s.log.Error("remove index checkpoint", "err", err)
		}
	}
	s.mu.Lock()
	old := s.attrs
	s.attrs = map[string]*attrs{}
	s.tl = newTimelines()
	s.mu.Unlock()
	ids := make([]string, 0, len(old))
	for id, a := range old {
		ids = append(ids, id)
		s.vec.Delete(a.user, id)
	}
	if err := s.clearText(ids); err != nil {
		s.log.Error("clear full-text index", "err", err)
	}
	if err := s.load(); err != nil {
		// No checkpoint is written of what it left (checkpoints stay off until the next open).
		s.log.Error("reload indexes after restore", "err", err)
	} else if s.ckpt != nil {
		s.ckpt.resume()
	}
	applied, _, _ := s.db.Applied(s.shard)
	feed := newTextFeeder(s.text, applied, s.indexers, s.feed.fail)
	feed.setLeader(s.feed.leader.Load())
	s.mu.Lock()
	s.feed = feed
	s.mu.Unlock()
}

// clearText deletes ids from bleve in chunks bleve accepts (a restored shard can hold far more than one batch).
// The applied marker goes to 0 first, so a crash between chunks makes the next open rebuild the index.
func (s *ShardIndex) clearText(ids []string) error {
	if err := s.text.ApplyWithMarkers(nil, nil, map[string][]byte{markerApplied: u64(0)}); err != nil {
		return err
	}
	for len(ids) > 0 {
		n := min(len(ids), feederChunk)
		if err := s.text.ApplyWithMarkers(nil, ids[:n], nil); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}

func (s *ShardIndex) indexVector(m memory.Memory) {
	s.indexAttrs(m)
	if !s.searchable(m) {
		s.vec.Delete(m.UserID, m.ID) // a vector of another model an earlier version left
		return
	}
	if err := s.vec.Upsert(m.UserID, m.ID, m.Embedding); err != nil {
		s.log.Warn("vector upsert", "id", m.ID, "err", err)
	}
}

// searchable reports whether m's embedding is of the shard's model, the only vectors a search may compare.
func (s *ShardIndex) searchable(m memory.Memory) bool {
	return m.EmbedModel == s.model && len(m.Embedding) == s.vec.Dim()
}

// vectorBatch gathers the vectors of one user during a load: a shard scan meets each user's memories one after
// another (keys are user first), so they enter the vector index a thousand at a time and its slabs grow
// once per call instead of at every append.
type vectorBatch struct {
	user string
	ids  []string
	vecs [][]float32
}

// vectorBatchMax bounds what a load holds beside the index, and how long one call holds the user's namespace
// lock against its searches while a reset reloads (1,024 vectors: 1 MiB at 256 dimensions, under a millisecond).
const vectorBatchMax = 1024

func (s *ShardIndex) loadVector(b *vectorBatch, m memory.Memory) {
	if m.UserID != b.user || len(b.ids) == vectorBatchMax {
		s.flushVectors(b)
		b.user = m.UserID
	}
	if s.searchable(m) {
		b.ids, b.vecs = append(b.ids, m.ID), append(b.vecs, m.Embedding)
	}
}

func (s *ShardIndex) flushVectors(b *vectorBatch) {
	if len(b.ids) > 0 {
		if err := s.vec.UpsertMany(b.user, b.ids, b.vecs); err != nil {
			s.log.Warn("vector upsert", "user", b.user, "memories", len(b.ids), "err", err)
		}
	}
	clear(b.vecs) // the embeddings were copied into the index
	b.ids, b.vecs = b.ids[:0], b.vecs[:0]
}

// indexAttrs records what filters and the pipeline's timelines need of m.
func (s *ShardIndex) indexAttrs(m memory.Memory) {
	s.mu.Lock()
	syms := &s.tl.syms
	s.attrs[m.ID] = &attrs{user: syms.intern(m.UserID), typ: memory.Type(syms.intern(string(m.Type))),
		agent: syms.intern(m.AgentID), run: syms.intern(m.RunID), occurred: m.OccurredAt,
		tags: syms.internAll(m.Tags), shared: m.IsShared(), retired: m.Retired(), archive: m.IsArchive()}
	if m.Retired() || m.IsArchive() {
		s.anyHidden.Store(true)
	}
	s.tl.noteLocked(m)
	s.mu.Unlock()
}

// Close closes the full-text index, after writing the checkpoint when memories changed since the last one.
func (s *ShardIndex) Close() error {
	if left := s.feed.close(); left > 0 {
		s.log.Info("full-text backlog left to the next open, which re-feeds it from the raft log's tail or, past it, from the records", "documents", left)
	}
	if s.ckpt != nil {
		s.ckpt.close()
		if s.ckpt.due(s.indexed.Load(), s.Memories(), time.Now().Add(s.ckpt.policy.MaxAge)) {
			if err := s.writeCheckpoint(); err != nil {
				s.log.Warn("write index checkpoint", "err", err)
			}
		}
	}
	s.vec.Close()
	return s.text.Close()
}

func toDoc(m memory.Memory) fulltext.Doc {
	return fulltext.Doc{ID: m.ID, UserID: m.UserID, AgentID: m.AgentID, RunID: m.RunID, Type: string(m.Type),
		Text: m.Text, Tags: m.Tags, Entities: m.Entities}
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func (a *attrs) match(q *Query) bool {
	if len(q.Types) > 0 && !slices.Contains(q.Types, a.typ) {
		return false
	}
	if (q.SharedOnly && !a.shared) || (a.retired && !q.IncludeRetired) || a.archive != q.Archive {
		return false
	}
	if (q.AgentID != "" && a.agent != q.AgentID) || (q.RunID != "" && a.run != q.RunID) {
		return false
	}
	if (!q.From.IsZero() && a.occurred.Before(q.From)) || (!q.To.IsZero() && !a.occurred.Before(q.To)) {
		return false
	}
	for _, t := range q.Tags {
		if !slices.Contains(a.tags, t) {
			return false
		}
	}
	return true
}
