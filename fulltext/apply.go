package fulltext

import "fmt"

// Doc is the indexed view of one memory record. Only ID comes back from Search.
type Doc struct {
	ID, UserID, AgentID, RunID, Type string
	Text                             string
	Tags                             []string
	Entities                         []string
}

// Apply indexes put (replacing any doc with the same ID) and deletes del, as one bleve batch:
// a search sees all of it or none of it, and a crash loses all of it or none of it.
func (ix *Index) Apply(put []Doc, del []string) error {
	return ix.ApplyWithMarkers(put, del, nil)
}

// ApplyWithMarkers is Apply plus marker updates in the same batch, so the owner's "applied raft
// index" can never run ahead of (or behind) the documents it describes.
func (ix *Index) ApplyWithMarkers(put []Doc, del []string, markers map[string][]byte) error {
	if n := len(put) + len(del); n > ix.opts.MaxBatch {
		return fmt.Errorf("%w: batch of %d exceeds MaxBatch %d", ErrInvalid, n, ix.opts.MaxBatch)
	}
	b := ix.b.NewBatch()
	for i := range put {
		d := &put[i]
		if d.ID == "" || d.UserID == "" {
			return fmt.Errorf("%w: doc %d: id and user id are required", ErrInvalid, i)
		}
		if err := b.Index(d.ID, ix.fields(d)); err != nil {
			return fmt.Errorf("fulltext: index %s: %w", d.ID, err)
		}
	}
	for _, id := range del {
		if id == "" {
			return fmt.Errorf("%w: empty id to delete", ErrInvalid)
		}
		b.Delete(id)
	}
	for k, v := range markers {
		if k == "" {
			return fmt.Errorf("%w: empty marker key", ErrInvalid)
		}
		b.SetInternal([]byte(markerPrefix+k), v)
	}
	if b.Size() == 0 {
		return nil
	}
	if err := ix.b.Batch(b); err != nil {
		return wrap("apply", err)
	}
	return nil
}

// fields is the document the mapping walks. Empty values are left out: they would index an empty
// keyword term for nothing.
func (ix *Index) fields(d *Doc) map[string]any {
	f := make(map[string]any, 8)
	f[fieldUserID] = d.UserID
	put := func(k, v string) {
		if v != "" {
			f[k] = v
		}
	}
	put(fieldAgentID, d.AgentID)
	put(fieldRunID, d.RunID)
	put(fieldType, d.Type)
	put(fieldText, scopedText(ix.analyzer, userScope(d.UserID), d.Text, d.Entities))
	if len(d.Tags) > 0 {
		f[fieldTags] = d.Tags
	}
	if len(d.Entities) > 0 {
		f[fieldEntities] = d.Entities
	}
	return f
}
