package embed

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// wordPiece is the subset of a HuggingFace tokenizer.json that Model2Vec
// models use: a normaliser, a pre-tokeniser and a WordPiece model.
type wordPiece struct {
	normalize func(string) string
	split     func(string) []string
	vocab     map[string]int
	prefix    string // continuing-subword prefix, usually "##"
	unkID     int    // -1 if the vocabulary has no unknown token
	maxChars  int    // longer words become the unknown token
	special   map[int]bool
}

type tokenizerFile struct {
	AddedTokens []struct {
		ID      int  `json:"id"`
		Special bool `json:"special"`
	} `json:"added_tokens"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Model        struct {
		Type     string          `json:"type"`
		UnkToken string          `json:"unk_token"`
		Prefix   *string         `json:"continuing_subword_prefix"`
		MaxChars int             `json:"max_input_chars_per_word"`
		Vocab    json.RawMessage `json:"vocab"`
	} `json:"model"`
}

// parseTokenizer reads tokenizer.json; only the WordPiece model is supported.
func parseTokenizer(data []byte) (*wordPiece, error) {
	var f tokenizerFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%w: tokenizer.json: %v", ErrBadModel, err)
	}
	typ := f.Model.Type
	if typ == "" && f.Model.Prefix != nil { // old files omit the type
		typ = "WordPiece"
	}
	if typ != "WordPiece" {
		return nil, fmt.Errorf("%w: tokenizer model type %q (only WordPiece is implemented)", ErrUnsupported, f.Model.Type)
	}
	wp := &wordPiece{prefix: "##", unkID: -1, maxChars: 100, special: map[int]bool{}}
	if err := json.Unmarshal(f.Model.Vocab, &wp.vocab); err != nil {
		return nil, fmt.Errorf("%w: tokenizer vocab: %v", ErrBadModel, err)
	}
	if f.Model.Prefix != nil {
		wp.prefix = *f.Model.Prefix
	}
	if f.Model.MaxChars > 0 {
		wp.maxChars = f.Model.MaxChars
	}
	if id, ok := wp.vocab[f.Model.UnkToken]; ok {
		wp.unkID = id
	}
	for _, t := range f.AddedTokens {
		wp.special[t.ID] = t.Special
	}
	var err error
	if wp.normalize, err = parseNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	if wp.split, err = parsePreTokenizer(f.PreTokenizer); err != nil {
		return nil, err
	}
	return wp, nil
}

// tokenize appends the ids of text to ids: normalise, split into words, then
// greedy longest-match-first WordPiece on each word.
func (wp *wordPiece) tokenize(text string, ids []int) []int {
	var buf []byte
	for _, word := range wp.split(wp.normalize(text)) {
		ids, buf = wp.word(word, ids, buf)
	}
	return ids
}

// word tokenises one word; if any part has no match the whole word is unknown,
// as in HuggingFace tokenizers.
func (wp *wordPiece) word(w string, ids []int, buf []byte) ([]int, []byte) {
	if utf8.RuneCountInString(w) > wp.maxChars {
		return append(ids, wp.unkID), buf
	}
	mark := len(ids)
	for start := 0; start < len(w); {
		id, end := -1, len(w)
		for ; end > start; end = lastRuneStart(w, end) {
			buf = buf[:0]
			if start > 0 {
				buf = append(buf, wp.prefix...)
			}
			buf = append(buf, w[start:end]...)
			if v, ok := wp.vocab[string(buf)]; ok { // no allocation: map lookup by converted bytes
				id = v
				break
			}
		}
		if id < 0 {
			return append(ids[:mark], wp.unkID), buf
		}
		ids = append(ids, id)
		start = end
	}
	return ids, buf
}

func lastRuneStart(s string, end int) int {
	_, size := utf8.DecodeLastRuneInString(s[:end])
	return end - size
}

// component is the common shape of normaliser and pre-tokeniser JSON.
type component struct {
	Type          string            `json:"type"`
	CleanText     *bool             `json:"clean_text"`
	ChineseChars  *bool             `json:"handle_chinese_chars"`
	StripAccents  *bool             `json:"strip_accents"`
	Lowercase     *bool             `json:"lowercase"`
	Normalizers   []json.RawMessage `json:"normalizers"`
	PreTokenizers []json.RawMessage `json:"pretokenizers"`
}

func parseComponent(raw json.RawMessage) (*component, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("%w: tokenizer component: %v", ErrBadModel, err)
	}
	return &c, nil
}

func boolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// parseNormalizer supports BertNormalizer, Lowercase, StripAccents, the four
// Unicode normal forms and Sequence; null is the identity.
func parseNormalizer(raw json.RawMessage) (func(string) string, error) {
	c, err := parseComponent(raw)
	if err != nil || c == nil {
		return func(s string) string { return s }, err
	}
	switch c.Type {
	case "BertNormalizer":
		lower := boolOr(c.Lowercase, true)
		// As in HuggingFace: strip_accents null follows lowercase.
		return bertNormalizer(boolOr(c.CleanText, true), boolOr(c.ChineseChars, true), boolOr(c.StripAccents, lower), lower), nil
	case "Lowercase":
		return strings.ToLower, nil
	case "StripAccents":
		return removeMarks, nil
	case "NFD":
		return norm.NFD.String, nil
	case "NFKD":
		return norm.NFKD.String, nil
	case "NFC":
		return norm.NFC.String, nil
	case "NFKC":
		return norm.NFKC.String, nil
	case "Sequence":
		var fs []func(string) string
		for _, r := range c.Normalizers {
			f, err := parseNormalizer(r)
			if err != nil {
				return nil, err
			}
			fs = append(fs, f)
		}
		return func(s string) string {
			for _, f := range fs {
				s = f(s)
			}
			return s
		}, nil
	}
	return nil, fmt.Errorf("%w: tokenizer normalizer %q", ErrUnsupported, c.Type)
}

// parsePreTokenizer supports BertPreTokenizer, Whitespace, WhitespaceSplit and
// Sequence; null keeps the text as one word.
func parsePreTokenizer(raw json.RawMessage) (func(string) []string, error) {
	c, err := parseComponent(raw)
	if err != nil || c == nil {
		return func(s string) []string { return []string{s} }, err
	}
	switch c.Type {
	case "BertPreTokenizer":
		return bertSplit, nil
	case "Whitespace":
		return whitespaceSplitWords, nil
	case "WhitespaceSplit":
		return strings.Fields, nil
	case "Sequence":
		var fs []func(string) []string
		for _, r := range c.PreTokenizers {
			f, err := parsePreTokenizer(r)
			if err != nil {
				return nil, err
			}
			fs = append(fs, f)
		}
		return func(s string) []string {
			words := []string{s}
			for _, f := range fs {
				var next []string
				for _, w := range words {
					next = append(next, f(w)...)
				}
				words = next
			}
			return words
		}, nil
	}
	return nil, fmt.Errorf("%w: tokenizer pre_tokenizer %q", ErrUnsupported, c.Type)
}
