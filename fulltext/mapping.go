package fulltext

import (
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/whitespace"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"

	// Register the analyzers Options.Analyzer may name.
	_ "github.com/blevesearch/bleve/v2/analysis/analyzer/standard"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/en"

	"github.com/memcluster/memcluster/internal/formats"
)

// MappingVersion is written into every index and checked by Open. Bump it whenever
// buildMapping or the document shape changes in a way old indexes cannot serve.
const MappingVersion = formats.FulltextMapping

// Index field names.
const (
	fieldUserID   = "user_id"
	fieldAgentID  = "agent_id"
	fieldRunID    = "run_id"
	fieldType     = "type"
	fieldTags     = "tags"
	fieldEntities = "entities"
	fieldText     = "text"
)

// scopedAnalyzer names the text field's analyzer in the mapping. Apply builds documents itself (apply.go) and
// analyses their text with a scopeAnalyzer (scope.go); the name records in the stored mapping that the text
// field holds scoped words, so an index of an older mapping fails the mapping check. (An index of a development
// build of mapping 3, whose scopes were hex text under the name "memcluster_scoped", fails it too.)
const scopedAnalyzer = "memcluster_user_scoped"

// buildMapping returns the index mapping. Nothing is stored, no term vectors or doc values are
// kept and nothing goes into _all: the owner holds the record in Pebble and only needs ids and
// scores back, so the index carries just postings (plus norms for text, which BM25 needs).
// analyzer is the index's default analyzer, which Apply and Search analyse text and entities with before
// scoping the words to their user.
func buildMapping(analyzer string) (*mapping.IndexMappingImpl, error) {
	keywordField := func() *mapping.FieldMapping {
		fm := mapping.NewKeywordFieldMapping()
		fm.Analyzer = keyword.Name
		fm.Store = false
		fm.IncludeTermVectors = false
		fm.IncludeInAll = false
		fm.DocValues = false
		fm.SkipFreqNorm = true // filters never score
		return fm
	}
	textField := func(name string) *mapping.FieldMapping {
		fm := mapping.NewTextFieldMapping()
		fm.Name = name
		fm.Analyzer = scopedAnalyzer
		fm.Store = false
		fm.IncludeTermVectors = false
		fm.IncludeInAll = false
		fm.DocValues = false
		return fm
	}
	doc := mapping.NewDocumentStaticMapping()
	for _, f := range []string{fieldUserID, fieldAgentID, fieldRunID, fieldType, fieldTags} {
		doc.AddFieldMappingsAt(f, keywordField())
	}
	doc.AddFieldMappingsAt(fieldText, textField(""))
	// Entities are exact keywords, and their words are also words of the text field (scopeAnalyzer): an entity
	// then counts once more in the text's term frequency (a modest boost, damped by BM25 saturation) without a
	// second scored field, whose disjunction coord factor would halve every text-only match.
	doc.AddFieldMappingsAt(fieldEntities, keywordField())

	im := mapping.NewIndexMapping()
	if err := im.AddCustomAnalyzer(scopedAnalyzer, map[string]any{"type": custom.Name, "tokenizer": whitespace.Name}); err != nil {
		return nil, err
	}
	im.DefaultMapping = doc
	im.DefaultAnalyzer = analyzer
	im.DefaultField = fieldText
	im.IndexDynamic = false
	im.StoreDynamic = false
	im.DocValuesDynamic = false
	im.ScoringModel = index.BM25Scoring
	return im, nil
}
