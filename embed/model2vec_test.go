package embed

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var tinyVocab = []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "cat", "dog", "sat", "on", "mat",
	"##s", "play", "##ing", ",", ".", "cafe", "un", "##believ", "##able", "hello"}

const tinyDim = 8

// tinyRow holds small multiples of 1/2, exact in both F32 and F16.
func tinyRow(id int) []float32 {
	row := make([]float32, tinyDim)
	for j := range row {
		row[j] = float32((id*5+j*3)%9-4) / 2
	}
	return row
}

// writeSafetensors writes tensors by hand: length prefix, JSON header, bytes.
func writeSafetensors(t *testing.T, path, dtype string, tensors map[string][][]float32) {
	t.Helper()
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var body []byte
	for _, name := range sortedKeys(tensors) {
		rows := tensors[name]
		start := len(body)
		for _, row := range rows {
			for _, x := range row {
				if dtype == "F16" {
					body = binary.LittleEndian.AppendUint16(body, floatToHalf(x))
				} else {
					body = binary.LittleEndian.AppendUint32(body, math.Float32bits(x))
				}
			}
		}
		header[name] = map[string]any{"dtype": dtype, "shape": []int{len(rows), len(rows[0])}, "data_offsets": []int{start, len(body)}}
	}
	h, _ := json.Marshal(header)
	file := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	file = append(append(file, h...), body...)
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
}

// floatToHalf handles the normal numbers the test uses.
func floatToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff == 0 {
		return uint16(b >> 16)
	}
	sign, exp, frac := uint16(b>>31)<<15, int(b>>23&0xff)-127+15, uint16(b>>13&0x3ff)
	return sign | uint16(exp)<<10 | frac
}

func tinyTokenizer(modelType string) []byte {
	vocab := map[string]int{}
	for i, tok := range tinyVocab {
		vocab[tok] = i
	}
	var added []map[string]any
	for i, tok := range tinyVocab[:4] {
		added = append(added, map[string]any{"id": i, "content": tok, "special": true})
	}
	b, _ := json.Marshal(map[string]any{
		"version":       "1.0",
		"added_tokens":  added,
		"normalizer":    map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": nil, "lowercase": true},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"model": map[string]any{"type": modelType, "unk_token": "[UNK]", "continuing_subword_prefix": "##",
			"max_input_chars_per_word": 100, "vocab": vocab},
	})
	return b
}

// tinyModel generates a model directory in t.TempDir().
func tinyModel(t *testing.T, dtype, tensorName string) string {
	t.Helper()
	dir := t.TempDir()
	rows := make([][]float32, len(tinyVocab))
	for i := range rows {
		rows[i] = tinyRow(i)
	}
	writeSafetensors(t, filepath.Join(dir, "model.safetensors"), dtype, map[string][][]float32{tensorName: rows})
	must(t, os.WriteFile(filepath.Join(dir, "tokenizer.json"), tinyTokenizer("WordPiece"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"model_type":"model2vec","normalize":true,"hidden_dim":8}`), 0o644))
	return dir
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestModel2VecTokenize(t *testing.T) {
	m, err := LoadModel2Vec(tinyModel(t, "F32", "embeddings"))
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string][]int{
		"The cats sat on the mat.": {4, 5, 10, 7, 8, 4, 9, 14},
		"Playing, CAFÉ!":           {11, 12, 13, 15}, // "!" is unknown and dropped
		"unbelievable dogz":        {16, 17, 18},     // "dogz" has no "##z": the whole word is unknown
		"[CLS] hello\tthe\u0000":   {19, 4},          // special-token text is split as punctuation; control chars cleaned
		"":                         {},
	} {
		if got := m.Tokenize(text); !slices.Equal(got, want) {
			t.Errorf("Tokenize(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestModel2VecExactVectors(t *testing.T) {
	f32, err := LoadModel2Vec(tinyModel(t, "F32", "embeddings"))
	if err != nil {
		t.Fatal(err)
	}
	f16, err := LoadModel2Vec(tinyModel(t, "F16", "emb.weight")) // also: the only 2-D tensor, named otherwise
	if err != nil {
		t.Fatal(err)
	}
	if f32.Dim() != tinyDim || !f32.ConfigNormalize() {
		t.Errorf("dim %d, normalize %v", f32.Dim(), f32.ConfigNormalize())
	}
	if f32.Fingerprint() == f16.Fingerprint() || !strings.HasPrefix(f32.Fingerprint(), "model2vec-v1/w") {
		t.Errorf("fingerprints %q, %q", f32.Fingerprint(), f16.Fingerprint())
	}
	texts := []string{"The cats sat on the mat.", "zzz !", ""}
	want := make([]float64, tinyDim)
	for _, id := range []int{4, 5, 10, 7, 8, 4, 9, 14} {
		for j, x := range tinyRow(id) {
			want[j] += float64(x) / 8
		}
	}
	var n float64
	for _, x := range want {
		n += x * x
	}
	for _, m := range []*StaticModel{f32, f16} {
		v, err := m.Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		for j := range want {
			if d := math.Abs(float64(v[0][j]) - want[j]/math.Sqrt(n)); d > 1e-6 {
				t.Fatalf("%s: coord %d = %v, want %v", m.Fingerprint(), j, v[0][j], want[j]/math.Sqrt(n))
			}
		}
		if l2(v[1]) != 0 || l2(v[2]) != 0 {
			t.Errorf("unknown-only and empty texts must give zero vectors")
		}
	}
}

func TestModel2VecErrors(t *testing.T) {
	dir := tinyModel(t, "F32", "embeddings")
	must(t, os.WriteFile(filepath.Join(dir, "tokenizer.json"), tinyTokenizer("Unigram"), 0o644))
	if _, err := LoadModel2Vec(dir); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "Unigram") {
		t.Errorf("unigram: %v", err)
	}

	dir = tinyModel(t, "F32", "embeddings")
	path := filepath.Join(dir, "model.safetensors")
	data, _ := os.ReadFile(path)
	must(t, os.WriteFile(path, data[:len(data)-4], 0o644))
	if _, err := LoadModel2Vec(dir); !errors.Is(err, ErrBadModel) {
		t.Errorf("truncated: %v", err)
	}

	rows := [][]float32{tinyRow(0), tinyRow(1)}
	writeSafetensors(t, path, "F32", map[string][][]float32{"a": rows, "b": rows})
	if _, err := LoadModel2Vec(dir); !errors.Is(err, ErrBadModel) {
		t.Errorf("two tensors: %v", err)
	}
	writeSafetensors(t, path, "F32", map[string][][]float32{"embeddings": rows})
	if _, err := LoadModel2Vec(dir); !errors.Is(err, ErrBadModel) || !strings.Contains(err.Error(), "rows") {
		t.Errorf("vocab larger than embeddings: %v", err)
	}
	if _, err := LoadModel2Vec(t.TempDir()); !errors.Is(err, ErrBadModel) {
		t.Errorf("empty dir: %v", err)
	}
}

func TestHalfToFloat(t *testing.T) {
	for h, want := range map[uint16]float32{
		0x3c00: 1, 0xc000: -2, 0x3800: 0.5, 0x0001: 1.0 / (1 << 24), 0x7bff: 65504, 0x8000: float32(math.Copysign(0, -1)),
	} {
		if got := halfToFloat(h); got != want {
			t.Errorf("halfToFloat(%#04x) = %v, want %v", h, got, want)
		}
	}
	if !math.IsInf(float64(halfToFloat(0x7c00)), 1) || !math.IsNaN(float64(halfToFloat(0x7e00))) {
		t.Error("inf/NaN")
	}
}
