package fulltext

import (
	"bytes"
	"maps"
	"slices"
	"testing"

	"github.com/blevesearch/bleve/v2/document"
	index "github.com/blevesearch/bleve_index_api"
)

// fieldTerms analyses doc and returns, per field name, each term's frequency, the field's length (its token
// count) and its indexing options.
type fieldTerms struct {
	freq    map[string]int
	length  int
	options index.FieldIndexingOptions
}

func analysed(doc *document.Document) map[string]*fieldTerms {
	out := map[string]*fieldTerms{}
	doc.VisitFields(func(f index.Field) {
		f.Analyze()
		ft := out[f.Name()]
		if ft == nil {
			ft = &fieldTerms{freq: map[string]int{}, options: f.Options()}
			out[f.Name()] = ft
		}
		ft.length += f.AnalyzedLength()
		for term, tf := range f.AnalyzedTokenFrequencies() {
			ft.freq[term] += tf.Frequency()
		}
	})
	return out
}

// Apply builds documents by hand instead of walking the mapping: its keyword fields are what the mapping
// would make of the same values, and its text field holds the user's scope followed by each word of the text
// and then of the entities, as the index's analyzer gives them.
func TestDocumentIsWhatTheMappingDescribes(t *testing.T) {
	ix := openTest(t, t.TempDir(), Options{InMemory: true})
	d := Doc{ID: "m1", UserID: "u-7", AgentID: "agent", RunID: "run", Type: "semantic",
		Text: "Sam adopted two dogs in Lisbon", Tags: []string{"pets", "home"}, Entities: []string{"Lisbon", "Sam"}}
	got := analysed(ix.document(&d))

	mapped := document.NewDocument(d.ID)
	fields := map[string]any{fieldUserID: d.UserID, fieldAgentID: d.AgentID, fieldRunID: d.RunID,
		fieldType: d.Type, fieldTags: d.Tags, fieldEntities: d.Entities}
	if err := ix.b.Mapping().MapDocument(mapped, fields); err != nil {
		t.Fatal(err)
	}
	want := analysed(mapped)
	delete(want, "_all") // nothing searches it; Apply leaves it out
	for _, name := range []string{fieldUserID, fieldAgentID, fieldRunID, fieldType, fieldTags, fieldEntities} {
		g, w := got[name], want[name]
		if g == nil || w == nil {
			t.Fatalf("field %s: built %v, mapped %v", name, g, w)
		}
		if !maps.Equal(g.freq, w.freq) || g.length != w.length || g.options != w.options {
			t.Errorf("field %s: built %+v, the mapping gives %+v", name, *g, *w)
		}
	}

	scope := userScope(d.UserID)
	wantText := map[string]int{}
	words := 0
	for _, s := range append([]string{d.Text}, d.Entities...) {
		for _, tok := range ix.analyzer.Analyze([]byte(s)) {
			wantText[string(append(slices.Clip(scope), tok.Term...))]++
			words++
		}
	}
	text := got[fieldText]
	if text == nil || !maps.Equal(text.freq, wantText) || text.length != words || text.options != textOptions {
		t.Fatalf("text field: %+v, want terms %v (length %d)", text, wantText, words)
	}
	for term := range text.freq {
		if !bytes.HasPrefix([]byte(term), scope) {
			t.Errorf("text term %q is not scoped to its user", term)
		}
	}
	if len(got) != len(want)+1 {
		t.Errorf("built fields %v, want the mapped ones and text", slices.Sorted(maps.Keys(got)))
	}
}
