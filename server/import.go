package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/consolidation"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
	"github.com/memcluster/memcluster/tiering"
)

// An import writes what an export read, as it was: memories under their own ids and times, records under
// their own keys, in one transaction of the user. Nothing is consolidated (the facts, history and patterns
// come with the file, so consolidating the imported episodes again would decide them twice), and an item
// equal to what is stored is not written, so a second import of the same file changes nothing. Embeddings
// are not carried: this cluster's embedder computes them.

// maxRecordKey bounds a record key (run ids, segment keys and event ids are all far shorter).
const maxRecordKey = 1024

func (s *Server) handleImport(w http.ResponseWriter, r *http.Request, c *decoded[apiv1.ImportRequest]) {
	req := c.body
	if n := len(req.Memories) + len(req.Records); n == 0 || n > apiv1.MaxImport {
		writeError(w, http.StatusBadRequest, "invalid_argument",
			fmt.Sprintf("give 1 to %d memories and records in all, got %d", apiv1.MaxImport, n), "memories")
		return
	}
	if err := s.validateImport(c.user, req); err != nil {
		s.fail(w, r, err)
		return
	}
	var resp apiv1.ImportResponse
	if !s.transact(w, r, c.user, readsMemories, func(ctx context.Context, shard uint32, t *userTxn) error {
		resp = apiv1.ImportResponse{UserID: c.user, Counts: map[string]apiv1.ImportCounts{}}
		return s.importInto(ctx, shard, t, req, resp.Counts)
	}) {
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// validateImport checks every item before anything is read or written: an import is all or nothing.
func (s *Server) validateImport(user string, req apiv1.ImportRequest) error {
	for i := range req.Memories {
		m := &req.Memories[i]
		err := s.opts.Limits.Validate(m)
		switch {
		case err != nil:
		case !memory.ValidID(m.ID):
			err = memory.FieldError("id", "not a memory id: %q", m.ID)
		case m.UserID != user:
			err = memory.FieldError("user_id", "%q is not the user of the path (%q)", m.UserID, user)
		case m.CreatedAt.IsZero() || m.OccurredAt.IsZero():
			err = memory.FieldError("created_at", "created_at and occurred_at are required on import")
		}
		if err != nil {
			return prefixField(fmt.Sprintf("memories[%d]", i), err)
		}
	}
	for i, rec := range req.Records {
		if err := validRecord(user, rec); err != nil {
			return prefixField(fmt.Sprintf("records[%d]", i), err)
		}
	}
	return nil
}

func prefixField(prefix string, err error) error {
	if ve, ok := err.(*memory.ValidationError); ok {
		return memory.FieldError(prefix+"."+ve.Field, "%s", ve.Msg)
	}
	return memory.FieldError(prefix, "%v", err)
}

// validRecord decodes a record's value into the type its kind stores, strictly, so that nothing the memory
// model could not read back goes in.
func validRecord(user string, rec apiv1.Record) error {
	if _, err := recordSpace(rec.Kind); err != nil {
		return err
	}
	if rec.Key == "" || len(rec.Key) > maxRecordKey || !utf8.ValidString(rec.Key) {
		return memory.FieldError("key", "must be 1 to %d bytes of UTF-8", maxRecordKey)
	}
	var into any
	switch {
	case rec.Kind == apiv1.RecordFact:
		into = &consolidation.Fact{}
	case rec.Kind == apiv1.RecordHistory:
		into = &historyEvent{}
	case rec.Kind == apiv1.RecordPattern:
		into = &consolidation.Pattern{}
	case rec.Kind == apiv1.RecordSession:
		into = &sessionRecord{}
	case rec.Kind == apiv1.RecordSignal && strings.HasPrefix(rec.Key, "s/"):
		into = &storedSample{}
	case rec.Kind == apiv1.RecordSignal && strings.HasPrefix(rec.Key, "a/"):
		into = new(string)
	case rec.Kind == apiv1.RecordCold:
		_, err := coldSegment(user, rec)
		return err
	default:
		return memory.FieldError("key", "a signal record's key starts with s/ or a/")
	}
	d := json.NewDecoder(bytes.NewReader(rec.Value))
	d.DisallowUnknownFields()
	if err := d.Decode(into); err != nil || d.More() {
		return memory.FieldError("value", "not a %s record: %v", rec.Kind, err)
	}
	return nil
}

// coldSegment decodes an imported segment and checks it is the user's and named by its content.
func coldSegment(user string, rec apiv1.Record) ([]byte, error) {
	var seg []byte
	if err := json.Unmarshal(rec.Value, &seg); err != nil {
		return nil, memory.FieldError("value", "a cold record's value is its segment in base64: %v", err)
	}
	meta, _, err := tiering.Decode(seg)
	switch {
	case err != nil:
		return nil, memory.FieldError("value", "unreadable segment: %v", err)
	case meta.UserID != user:
		return nil, memory.FieldError("value", "the segment belongs to user %q", meta.UserID)
	case !strings.Contains(rec.Key, tiering.SegmentID(seg)):
		return nil, memory.FieldError("key", "does not name the segment's checksum %s", tiering.SegmentID(seg))
	}
	return seg, nil
}

// importInto stages every item that differs from what is stored, counting what happens to each.
func (s *Server) importInto(ctx context.Context, shard uint32, t *userTxn, req apiv1.ImportRequest, counts map[string]apiv1.ImportCounts) error {
	rd, err := s.c.ReadSide(ctx, shard, storage.SpaceFacts, t.user, "", 1, false)
	if err != nil {
		return err
	}
	t.observe(rd.Rev) // guards the transaction: a concurrent change of the user's state redoes the comparison
	for _, m := range req.Memories {
		old, err := s.c.Get(ctx, shard, t.user, m.ID, false)
		found := err == nil
		if err != nil && !isNotFound(err) {
			return err
		}
		if count(counts, "memory", found, found && sameMemory(old, m)) {
			m.Embedding, m.EmbedModel = nil, ""
			t.puts = append(t.puts, m)
		}
	}
	for _, rec := range req.Records {
		if err := s.importRecord(ctx, shard, t, rec, counts); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) importRecord(ctx context.Context, shard uint32, t *userTxn, rec apiv1.Record, counts map[string]apiv1.ImportCounts) error {
	space, _ := recordSpace(rec.Kind)
	rd, err := s.c.ReadSide(ctx, shard, space, t.user, rec.Key, 1, false)
	if err != nil {
		return err
	}
	var old []byte
	found := len(rd.Items) == 1 && rd.Items[0].Key == rec.Key
	if found {
		old = rd.Items[0].Value
	}
	if rec.Kind != apiv1.RecordCold {
		if count(counts, rec.Kind, found, found && sameJSON(old, rec.Value)) {
			t.side = append(t.side, storage.SideKV{Space: space, Key: rec.Key, Value: rec.Value})
		}
		return nil
	}
	seg, _ := coldSegment(t.user, rec) // validated before the transaction
	same := false
	if found {
		if stored, err := s.coldRecord(ctx, storage.SideKV{Space: space, Key: rec.Key, Value: old}); err == nil {
			same = sameJSON(stored.Value, rec.Value)
		}
	}
	if !count(counts, rec.Kind, found, same) {
		return nil
	}
	meta, items, _ := tiering.Decode(seg)
	return s.storeSegment(ctx, t, rec.Key, seg, meta.Type, len(items))
}

// count records an item's outcome and reports whether it must be written.
func count(counts map[string]apiv1.ImportCounts, kind string, found, same bool) bool {
	c := counts[kind]
	defer func() { counts[kind] = c }()
	switch {
	case same:
		c.Unchanged++
		return false
	case found:
		c.Updated++
	default:
		c.Created++
	}
	return true
}

// sameMemory compares two memories as the API shows them: embeddings are this cluster's own business.
func sameMemory(a, b memory.Memory) bool {
	a.Embedding, a.EmbedModel, b.Embedding, b.EmbedModel = nil, "", nil, ""
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// sameJSON compares two JSON values byte for byte once compacted (a file may have been re-indented).
func sameJSON(a, b []byte) bool {
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}

func isNotFound(err error) bool { return errors.Is(err, memory.ErrNotFound) }
