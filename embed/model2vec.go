package embed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// Model2Vec's encode defaults: at most maxTokens tokens per text, after
// cutting the text to maxTokens × the median token length in characters.
const model2vecMaxTokens = 512

// StaticModel is a Model2Vec static embedding model: a text's vector is the
// mean of its tokens' rows, L2-normalised. Safe for concurrent use.
type StaticModel struct {
	tok        *wordPiece
	emb        []float32 // rows × dim, row-major
	dim        int
	maxChars   int  // text cut, in runes, before tokenising
	configNorm bool // config.json "normalize"; informational, see DESIGN.md
	fp         string
}

// LoadModel2Vec loads model.safetensors, tokenizer.json and the optional
// config.json from dir.
func LoadModel2Vec(dir string) (*StaticModel, error) {
	m, err := loadModel2Vec(dir)
	if err != nil {
		return nil, fmt.Errorf("load model2vec %s: %w", dir, err)
	}
	return m, nil
}

func loadModel2Vec(dir string) (*StaticModel, error) {
	weights, err := os.ReadFile(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		return nil, errors.Join(ErrBadModel, err)
	}
	tokJSON, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		return nil, errors.Join(ErrBadModel, err)
	}
	emb, err := embeddingTensor(weights)
	if err != nil {
		return nil, err
	}
	tok, err := parseTokenizer(tokJSON)
	if err != nil {
		return nil, err
	}
	m := &StaticModel{tok: tok, emb: emb.data, dim: emb.shape[1]}
	if err := m.checkVocab(emb.shape[0]); err != nil {
		return nil, err
	}
	if m.configNorm, err = readNormalizeFlag(dir); err != nil {
		return nil, err
	}
	m.maxChars = model2vecMaxTokens * medianTokenLength(tok.vocab)
	m.fp = fmt.Sprintf("model2vec-v1/w%s/t%s/d%d", shortHash(weights), shortHash(tokJSON), m.dim)
	return m, nil
}

// embeddingTensor picks "embeddings", or the file's only 2-D tensor.
func embeddingTensor(file []byte) (tensor, error) {
	tensors, err := parseSafetensors(file)
	if err != nil {
		return tensor{}, err
	}
	// Vocabulary-quantised models remap and reweight tokens; refusing them
	// beats silently producing different vectors.
	for _, name := range []string{"mapping", "weights"} {
		if _, ok := tensors[name]; ok {
			return tensor{}, fmt.Errorf("%w: tensor %q (vocabulary quantisation)", ErrUnsupported, name)
		}
	}
	t, ok := tensors["embeddings"]
	if !ok {
		var found []string
		for _, name := range sortedKeys(tensors) {
			if len(tensors[name].shape) == 2 {
				found, t = append(found, name), tensors[name]
			}
		}
		if len(found) != 1 {
			return tensor{}, fmt.Errorf("%w: no \"embeddings\" tensor and %d 2-D tensors %v", ErrBadModel, len(found), found)
		}
	}
	if len(t.shape) != 2 || t.shape[0] == 0 || t.shape[1] == 0 {
		return tensor{}, fmt.Errorf("%w: embeddings shape %v, want [vocab, dim]", ErrBadModel, t.shape)
	}
	return t, nil
}

// checkVocab makes sure every token id has a row.
func (m *StaticModel) checkVocab(rows int) error {
	for tok, id := range m.tok.vocab {
		if id < 0 || id >= rows {
			return fmt.Errorf("%w: token %q has id %d but embeddings have %d rows", ErrBadModel, tok, id, rows)
		}
	}
	return nil
}

func readNormalizeFlag(dir string) (bool, error) {
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, errors.Join(ErrBadModel, err)
	}
	var cfg struct {
		Normalize bool `json:"normalize"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return false, fmt.Errorf("%w: config.json: %v", ErrBadModel, err)
	}
	return cfg.Normalize, nil
}

// medianTokenLength follows Model2Vec: int(median of token lengths in characters).
func medianTokenLength(vocab map[string]int) int {
	lens := make([]int, 0, len(vocab))
	for tok := range vocab {
		lens = append(lens, len([]rune(tok)))
	}
	sort.Ints(lens)
	n := len(lens)
	if n == 0 {
		return 1
	}
	med := lens[n/2]
	if n%2 == 0 {
		med = (lens[n/2-1] + lens[n/2]) / 2
	}
	return max(med, 1)
}

func shortHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Dim returns the vector length.
func (m *StaticModel) Dim() int { return m.dim }

// Fingerprint is "model2vec-v1/w{weights sha256}/t{tokenizer sha256}/d{dim}",
// independent of the directory the model sits in.
func (m *StaticModel) Fingerprint() string { return m.fp }

// ConfigNormalize reports config.json's "normalize" flag. Embed normalises
// regardless, as the Embedder contract requires.
func (m *StaticModel) ConfigNormalize() bool { return m.configNorm }

// Tokenize returns the ids Embed averages: unknown and special tokens removed,
// truncated like Model2Vec's encode.
func (m *StaticModel) Tokenize(text string) []int {
	if r := []rune(text); len(r) > m.maxChars {
		text = string(r[:m.maxChars])
	}
	ids := m.tok.tokenize(text, nil)
	kept := ids[:0]
	for _, id := range ids {
		if id != m.tok.unkID && !m.tok.special[id] {
			kept = append(kept, id)
		}
	}
	return kept[:min(len(kept), model2vecMaxTokens)]
}

// Embed returns the normalised mean token vector of each text; a text with no
// known token yields a zero vector.
func (m *StaticModel) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := matrix(len(texts), m.dim)
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("model2vec embed: %w", err)
			}
		}
		ids := m.Tokenize(t)
		for _, id := range ids {
			row := m.emb[id*m.dim : (id+1)*m.dim]
			for j, x := range row {
				out[i][j] += x
			}
		}
		// The mean's 1/n factor is skipped: normalising removes it anyway.
		normalize(out[i])
	}
	return out, nil
}
