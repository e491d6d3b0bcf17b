package retrieval

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/fulltext"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
	"github.com/memcluster/memcluster/vector"
)

// logTail is a TailReader over the commands a fixture applied.
type logTail map[uint64][]byte

func (l logTail) Tail(from, to, _ uint64, fn func(storage.Command)) (bool, error) {
	for i := from + 1; i <= to; i++ {
		data, ok := l[i]
		if !ok {
			return false, nil
		}
		c, err := storage.DecodeCommand(data)
		if err != nil {
			return false, err
		}
		fn(c)
	}
	return true, nil
}

// indexState is everything an open derives from the records, in a comparable form.
type indexState struct {
	Attrs   map[string]string
	Users   map[string]string
	Vectors map[string]string // each row as stored: its half-precision bits and scale
}

func stateOf(s *ShardIndex) indexState {
	st := indexState{Attrs: map[string]string{}, Users: map[string]string{}, Vectors: map[string]string{}}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for id, a := range s.attrs {
		st.Attrs[id] = fmt.Sprintf("%s %s %s %s %s %v %v %v %v %v", a.user, a.typ, a.agent, a.run,
			a.occurred.UTC().Format(time.RFC3339Nano), a.occurred.IsZero(), a.tags, a.shared, a.retired, a.archive)
	}
	for u, tl := range s.tl.users {
		var b strings.Builder
		fmt.Fprintf(&b, "ids %v starts %v names %v actors %v;", tl.ids, tl.starts, tl.names, tl.actors)
		for _, id := range tl.ids {
			e := tl.entries[id]
			fmt.Fprintf(&b, " %s@%s:%s:%v", id, e.occurred.UTC().Format(time.RFC3339Nano), e.actor, e.names)
		}
		st.Users[u] = b.String()
		s.vec.RowsHalf(u, func(id string, h []uint16, scale float32) { st.Vectors[u+"/"+id] = fmt.Sprint(h, scale) })
	}
	return st
}

// openWith opens another index over the fixture's records, keeping its checkpoint at path.
func (f *fixture) openWith(path string, tail TailReader, logs *strings.Builder) *ShardIndex {
	f.t.Helper()
	return f.openModel(path, f.emb.Fingerprint(), tail, logs)
}

func (f *fixture) openModel(path, model string, tail TailReader, logs *strings.Builder) *ShardIndex {
	f.t.Helper()
	log := slog.New(slog.DiscardHandler)
	if logs != nil {
		log = slog.New(slog.NewTextHandler(logs, nil))
	}
	var tr TailReader
	if tail != nil {
		tr = tail
	}
	s, err := OpenShardIndexWith(ShardIndexOptions{Shard: 0, Records: f.db, Vectors: vector.New(f.emb.Dim()),
		Text: f.textAtApplied(), Model: model, Logger: log, Tail: tr, Checkpoint: path,
		CheckpointPolicy: CheckpointPolicy{Check: time.Hour}, Indexers: f.indexers})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { s.Close() })
	return s
}

// textAtApplied is an empty in-memory full-text index whose marker says it holds every applied change, so an open
// takes the vectors' path alone (the tests compare vectors and attributes). Its ShardIndex closes it.
func (f *fixture) textAtApplied() *fulltext.Index {
	f.t.Helper()
	applied, _, err := f.db.Applied(0)
	if err != nil {
		f.t.Fatal(err)
	}
	epoch, err := f.db.RestoreEpoch(0)
	if err != nil {
		f.t.Fatal(err)
	}
	ix, err := fulltext.Open("", fulltext.Options{InMemory: true})
	if err == nil {
		err = ix.ApplyWithMarkers(nil, nil, map[string][]byte{markerApplied: u64(applied), markerEpoch: u64(epoch)})
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return ix
}

// variedMemories puts memories with every attribute a checkpoint keeps.
func (f *fixture) variedMemories(users int) []memory.Memory {
	var all []memory.Memory
	for u := range users {
		user := fmt.Sprintf("user-%d", u)
		for i := range 30 {
			m := memory.Memory{UserID: user, Text: fmt.Sprintf("Ana Lima: note %d about trip %d", i, u),
				OccurredAt: t0.Add(time.Duration(i*20) * time.Minute), AgentID: "agent", RunID: fmt.Sprint("run-", i%3),
				Tags: []string{"t", fmt.Sprint("x", i%4)}, Entities: []string{"Porto Alegre"},
				Metadata: map[string]string{}}
			switch i % 6 {
			case 1:
				m.Scope, m.Type = memory.Shared, memory.Semantic
			case 2:
				m.Metadata[memory.MetaFactStatus] = "superseded"
			case 3:
				m.Metadata[memory.MetaTier] = "archive"
			case 4:
				m.Metadata["speaker"] = "Bruno"
				m.Tags = nil
			case 5: // outside the years UnixNano can hold
				m.OccurredAt = time.Date(1492+i*30, 10, 12, 0, 0, 0, 123, time.UTC)
			}
			all = append(all, f.put(m))
		}
	}
	return all
}

// A checkpoint written by one open gives the next open exactly what reading every record gives.
func TestCheckpointLoadsWhatTheRecordsGive(t *testing.T) {
	f := newFixture(t)
	f.variedMemories(4)
	path := filepath.Join(t.TempDir(), "shard-0.vectors")
	var logs strings.Builder
	f.indexers = NewIndexers(1) // counts the node's checkpoints
	first := f.openWith(path, logTail{}, &logs)
	if !strings.Contains(logs.String(), `vectors="records: no checkpoint"`) {
		t.Fatalf("first open: %s", logs.String())
	}
	if err := first.writeCheckpoint(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil {
		t.Fatal(err)
	} else if got := first.indexers.Stats(); got.Checkpoints != 1 || got.CheckpointBytes != st.Size() ||
		got.CheckpointTime <= 0 {
		t.Fatalf("stats after one checkpoint of %d bytes: %+v", st.Size(), got)
	}
	logs.Reset()
	second := f.openWith(path, logTail{}, &logs)
	if !strings.Contains(logs.String(), `vectors="checkpoint, tail of 0 memories"`) {
		t.Fatalf("second open: %s", logs.String())
	}
	want, got := stateOf(f.openWith("", nil, nil)), stateOf(second)
	if len(want.Attrs) != 120 || len(want.Vectors) != 120 {
		t.Fatalf("records give %d memories, %d vectors", len(want.Attrs), len(want.Vectors))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("checkpoint state differs from the records'\ngot  %v\nwant %v", got, want)
	}
	if !second.anyHidden.Load() {
		t.Fatal("retired and archived memories loaded without the hidden flag")
	}
}

// Changes after the checkpoint (puts, replacements, deletes, a forgotten user, new embeddings) are read from the
// records for the memories the raft log's tail touched.
func TestCheckpointThenTheTail(t *testing.T) {
	f := newFixture(t)
	all := f.variedMemories(3)
	path := filepath.Join(t.TempDir(), "shard-0.vectors")
	if err := f.openWith(path, nil, nil).writeCheckpoint(); err != nil {
		t.Fatal(err)
	}
	f.put(memory.Memory{UserID: "user-0", Text: "a new note", OccurredAt: t0.Add(48 * time.Hour)})
	f.put(memory.Memory{UserID: "newcomer", Text: "first words", OccurredAt: t0})
	changed := all[5]
	changed.Tags, changed.Metadata = []string{"changed"}, map[string]string{memory.MetaFactStatus: "retracted"}
	f.apply(storage.EncodePut([]memory.Memory{changed}))
	f.apply(storage.EncodeDelete(storage.DeletePayload{UserID: "user-1", IDs: []string{all[31].ID, all[40].ID}}))
	f.apply(storage.EncodeDeleteUser(storage.DeleteUserPayload{UserID: "user-2"}))
	f.put(memory.Memory{UserID: "user-2", Text: "back again", OccurredAt: t0})
	vec := slices.Clone(all[3].Embedding)
	vec[0] += 0.5
	f.apply(storage.EncodeSetEmbeddings(storage.SetEmbeddingsPayload{Items: []storage.EmbeddingUpdate{
		{UserID: "user-0", ID: all[3].ID, Model: f.emb.Fingerprint(), Vector: vec},
		{UserID: "user-0", ID: all[4].ID, Model: "another-model", Vector: vec}}}))

	var logs strings.Builder
	got := stateOf(f.openWith(path, f.cmds, &logs))
	if !strings.Contains(logs.String(), `vectors="checkpoint, tail of 8 memories"`) {
		t.Fatalf("open: %s", logs.String())
	}
	want := stateOf(f.openWith("", nil, nil))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("checkpoint + tail differs from the records'\ngot  %v\nwant %v", got, want)
	}
	if _, ok := want.Vectors["user-0/"+all[4].ID]; ok {
		t.Fatal("a vector of another model is searchable")
	}
}

// A checkpoint that cannot be used is ignored with the reason logged, and the records are read.
func TestUnusableCheckpointFallsBackToTheRecords(t *testing.T) {
	f := newFixture(t)
	f.variedMemories(2)
	dir := t.TempDir()
	path := filepath.Join(dir, "shard-0.vectors")
	if err := f.openWith(path, nil, nil).writeCheckpoint(); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := stateOf(f.openWith("", nil, nil))
	for _, c := range []struct {
		name, why string
		prepare   func()
	}{
		{"flipped byte", "checksum mismatch", func() {
			bad := slices.Clone(good)
			bad[len(bad)/2] ^= 1
			os.WriteFile(path, bad, 0o644)
		}},
		{"truncated", "checksum mismatch", func() { os.WriteFile(path, good[:len(good)-100], 0o644) }},
		{"another model", "model", func() {
			os.WriteFile(path, good, 0o644)
			if err := f.openModel(path, "another-model", nil, nil).writeCheckpoint(); err != nil {
				t.Fatal(err)
			}
		}},
		{"no tail reader", "no raft log reader", func() {
			os.WriteFile(path, good, 0o644)
			f.put(memory.Memory{UserID: "user-0", Text: "later", OccurredAt: t0})
			want = stateOf(f.openWith("", nil, nil))
		}},
		{"log gap", "cannot vouch", func() {
			os.WriteFile(path, good, 0o644)
			delete(f.cmds, f.n)
		}},
	} {
		c.prepare()
		var logs strings.Builder
		var tail TailReader = f.cmds
		if c.name == "no tail reader" {
			tail = nil
		}
		got := stateOf(f.openWith(path, tail, &logs))
		if !strings.Contains(logs.String(), `vectors="records: `) || !strings.Contains(logs.String(), c.why) {
			t.Fatalf("%s: the open did not log %q: %s", c.name, c.why, logs.String())
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: state differs from the records'", c.name)
		}
	}
}

// A reset (snapshot restore) removes the checkpoint: its state came from no entry of the log.
func TestResetRemovesTheCheckpoint(t *testing.T) {
	f := newFixture(t)
	f.variedMemories(1)
	path := filepath.Join(t.TempDir(), "shard-0.vectors")
	s := f.openWith(path, nil, nil)
	if err := s.writeCheckpoint(); err != nil {
		t.Fatal(err)
	}
	s.Reset()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("checkpoint after a reset: %v", err)
	}
}

// A clean close leaves a checkpoint at the last change it indexed; one with nothing new writes nothing.
func TestCloseWritesTheCheckpoint(t *testing.T) {
	f := newFixture(t)
	path := filepath.Join(t.TempDir(), "shard-0.vectors")
	s, err := OpenShardIndexWith(ShardIndexOptions{Shard: 0, Records: f.db, Vectors: vector.New(f.emb.Dim()),
		Text: f.textAtApplied(), Model: f.emb.Fingerprint(), Checkpoint: path})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("an empty shard wrote a checkpoint: %v", err)
	}
	s, err = OpenShardIndexWith(ShardIndexOptions{Shard: 0, Records: f.db, Vectors: vector.New(f.emb.Dim()),
		Text: f.textAtApplied(), Model: f.emb.Fingerprint(), Checkpoint: path})
	if err != nil {
		t.Fatal(err)
	}
	fsm, err := storage.NewShardFSM(f.db, 0, s, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	f.fsm = fsm
	f.variedMemories(1)
	if err := s.WaitIndexed(context.Background(), f.n); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := newCkptReader(data)
	if err != nil {
		t.Fatal(err)
	}
	if h := r.header(); h.applied != f.n || h.users != 1 {
		t.Fatalf("checkpoint at %d with %d users, want %d and 1", h.applied, h.users, f.n)
	}
}

func TestCheckpointDue(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name              string
		at, indexed       uint64
		changes, memories int
		written           time.Duration // before now; 0: never
		want              bool
	}{
		{"empty shard", 0, 0, 0, 0, 0, false},
		{"loaded from the records, none on disk", 0, 500, 0, 100, 0, true},
		{"nothing new", 400, 500, 0, 100, time.Hour, false},
		{"too soon", 400, 9000, 10, 100, time.Second, false},
		{"log moved far", 400, 400 + 4096, 1, 100_000, time.Minute, true},
		{"a tenth changed", 400, 500, 1000, 10_000, time.Minute, true},
		{"few changes, recent", 400, 500, 999, 10_000, time.Minute, false},
		{"few changes, old", 400, 500, 1, 10_000, 11 * time.Minute, true},
	} {
		ck := newCheckpointer("x", CheckpointPolicy{})
		ck.at = c.at
		ck.changes.Store(int64(c.changes))
		if c.written != 0 {
			ck.written = now.Add(-c.written)
		}
		if got := ck.due(c.indexed, c.memories, now); got != c.want {
			t.Errorf("%s: due %v, want %v", c.name, got, c.want)
		}
	}
}

// A snapshot restore that crashed before the indexes heard of it leaves a checkpoint and a bleve index of the
// records it replaced, maybe at the very applied index the restored records have: the restore epoch tells them
// apart, and both are rebuilt from the records.
func TestRestoreEpochOutdatesTheIndexes(t *testing.T) {
	f := newFixture(t)
	f.variedMemories(2)
	path := filepath.Join(t.TempDir(), "shard-0.vectors")
	if err := f.openWith(path, f.cmds, nil).writeCheckpoint(); err != nil {
		t.Fatal(err)
	}
	other := newFixture(t)
	other.variedMemories(3)
	var stream bytes.Buffer
	if _, err := other.fsm.WriteBackup(&stream); err != nil {
		t.Fatal(err)
	}
	restorer, err := storage.NewShardFSM(f.db, 0, nil, slog.New(slog.DiscardHandler), nil) // no indexer: a crash
	if err != nil {
		t.Fatal(err)
	}
	if err := restorer.Restore(io.NopCloser(&stream)); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	got := stateOf(f.openWith(path, f.cmds, &logs))
	if want := `vectors="records: checkpoint of restore epoch 0, records in 1"`; !strings.Contains(logs.String(), want) {
		t.Fatalf("the open did not log %s: %s", want, logs.String())
	}
	if want := stateOf(f.openWith("", nil, nil)); !reflect.DeepEqual(got, want) || len(want.Attrs) != 90 {
		t.Fatalf("state after the restore differs from the records' (%d memories)", len(want.Attrs))
	}

	// A full-text index at the restored applied index, but of the epoch before.
	text := memText(t)
	applied, _, _ := f.db.Applied(0)
	if err := text.ApplyWithMarkers(nil, nil, map[string][]byte{markerApplied: u64(applied)}); err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	if _, err := OpenShardIndexWith(ShardIndexOptions{Records: f.db, Vectors: vector.New(f.emb.Dim()), Text: text,
		Model: f.emb.Fingerprint(), Logger: slog.New(slog.NewTextHandler(&logs, nil)), Tail: f.cmds}); err != nil {
		t.Fatal(err)
	}
	if want := `bleve_reindexed="full: built in restore epoch 0, records in 1"`; !strings.Contains(logs.String(), want) {
		t.Fatalf("the open did not log %s: %s", want, logs.String())
	}
	if ids, _ := text.IDs(); len(ids) != 90 {
		t.Fatalf("full-text index holds %d documents after the rebuild, want 90", len(ids))
	}
}

// Between a reset's removal of the checkpoint and the end of its reload, nothing is written.
func TestNoCheckpointDuringAReset(t *testing.T) {
	f := newFixture(t)
	f.variedMemories(1)
	path := filepath.Join(t.TempDir(), "shard-0.vectors")
	s := f.openWith(path, nil, nil)
	if err := s.ckpt.remove(); err != nil {
		t.Fatal(err)
	}
	if err := s.writeCheckpoint(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a checkpoint written during a reset: %v", err)
	}
	s.ckpt.resume()
	if err := s.writeCheckpoint(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

// A checkpoint in a turn waits for it, writes the file and gives the turn back; one whose index closed while it
// waited writes nothing.
func TestCheckpointInATurn(t *testing.T) {
	f := newFixture(t)
	f.variedMemories(1)
	path := filepath.Join(t.TempDir(), "shard-0.vectors")
	f.indexers = NewIndexers(1)
	s := f.openWith(path, nil, nil)
	gate := s.indexers

	gate.sem <- struct{}{} // a batch's turn
	stop := make(chan struct{})
	close(stop)
	if err := s.checkpointIn(gate, stop); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a checkpoint written after its index closed: %v", err)
	}
	gate.release()

	if err := s.checkpointIn(gate, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("the temporary file stayed: %v", err)
	}
	if n := len(gate.sem); n != 0 {
		t.Fatalf("%d turns held after the checkpoint", n)
	}
	if got := gate.Stats().Checkpoints; got != 1 {
		t.Fatalf("%d checkpoints counted, want 1", got)
	}
}
