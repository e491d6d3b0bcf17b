package fulltext

import (
	"fmt"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/document"
	index "github.com/blevesearch/bleve_index_api"
)

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
		if err := b.IndexAdvanced(ix.document(d)); err != nil {
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
	ix.settle.applied()
	return nil
}

// document builds d's bleve document as the mapping describes it, without walking the mapping: keyword
// fields are their value as one term (no analyzer), and the text field is analysed by a scopeAnalyzer, which
// scopes the words of the text and the entities to the user in one pass. Empty values are left out: they would
// index an empty keyword term for nothing. No "_all" field is built: nothing searches it.
func (ix *Index) document(d *Doc) *document.Document {
	doc := document.NewDocument(d.ID)
	keyword := func(name, v string) {
		if v != "" {
			doc.AddField(document.NewTextFieldCustom(name, nil, []byte(v), keywordOptions, nil))
		}
	}
	keyword(fieldUserID, d.UserID)
	keyword(fieldAgentID, d.AgentID)
	keyword(fieldRunID, d.RunID)
	keyword(fieldType, d.Type)
	for _, t := range d.Tags {
		keyword(fieldTags, t)
	}
	for _, e := range d.Entities {
		keyword(fieldEntities, e)
	}
	if d.Text != "" || len(d.Entities) > 0 {
		a := &scopeAnalyzer{words: ix.analyzer, scope: userScope(d.UserID), also: d.Entities}
		text := []byte(d.Text)
		doc.AddField(document.NewTextFieldCustom(fieldText, nil, text, textOptions, analyzed(a.Analyze(text))))
	}
	doc.SetIndexed()
	return doc
}

// analyzed is a text's tokens, analysed already. Apply analyses each document in the calling goroutine rather
// than in bleve's shared analysis workers, so the caller decides where that CPU goes (retrieval.Indexers builds
// batches on threads of lower priority than the write path's).
type analyzed analysis.TokenStream

func (a analyzed) Analyze([]byte) analysis.TokenStream { return analysis.TokenStream(a) }

// The fields' indexing options, as buildMapping's field mappings give them.
const (
	keywordOptions = index.IndexField | index.SkipFreqNorm
	textOptions    = index.IndexField
)
