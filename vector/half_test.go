package vector

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/x448/float16"
)

// A row keeps 11 significant bits of every component against its largest, whatever the vector's magnitude;
// decoding and encoding again gives the same row (a checkpoint reloaded holds what was written); vectors that
// cannot be scaled are stored as zeros.
func TestEncodeRow(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, mag := range []float64{1e-30, 1e-6, 1, 3e4, 1e6, 1e30} {
		for _, dim := range []int{1, 7, 64, 256, 1536} {
			v := make([]float32, dim)
			for i := range v {
				v[i] = float32(r.NormFloat64() * mag)
			}
			half, q8, scale := stored(v)
			back := make([]float32, dim)
			decodeRow(back, half, scale)
			m := float64(maxAbs(v))
			for i := range v {
				// Half rounding (2^-11 relative, 2^-25 of the largest below the normal range) and the float32
				// products around it.
				if d := math.Abs(float64(back[i] - v[i])); d > math.Abs(float64(v[i]))*(1.0/2048+1e-6)+m*0x1p-24 {
					t.Fatalf("mag %g dim %d [%d]: %v stored as %v", mag, dim, i, v[i], back[i])
				}
				if want := math.Round(127 * float64(back[i]) / float64(scale)); float64(q8[i]) != want {
					t.Fatalf("mag %g dim %d [%d]: int8 %d, want %v", mag, dim, i, q8[i], want)
				}
			}
			half2, q82, scale2 := stored(back)
			if scale2 != scale || !slices.Equal(half2, half) || !slices.Equal(q82, q8) {
				t.Fatalf("mag %g dim %d: re-encoding its own decoding changed the row", mag, dim)
			}
		}
	}
	for _, v := range [][]float32{{0, 0, 0}, {1, float32(math.NaN()), 2}, {1, float32(math.Inf(-1)), 2}} {
		half, q8, scale := stored(v)
		if scale != 0 || slices.ContainsFunc(half, func(h uint16) bool { return h != 0 }) ||
			slices.ContainsFunc(q8, func(q int8) bool { return q != 0 }) {
			t.Fatalf("%v stored as %v %v scale %v", v, half, q8, scale)
		}
	}
}

// Scores from half rows stay within half precision's rounding of the float32 dot products.
func TestHalfScoresCloseToFloat32(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for _, dim := range []int{16, 256, 1536} {
		ix := New(dim)
		vecs := fill(t, ix, r, "u", 500)
		for range 20 {
			q := randUnit(r, dim)
			for _, h := range ix.Search("u", q, 10, nil) {
				if d := math.Abs(float64(h.Score - dot(q, vecs[h.ID]))); d > 2e-3 {
					t.Fatalf("dim %d: %s scored %v, float32 %v", dim, h.ID, h.Score, dot(q, vecs[h.ID]))
				}
			}
		}
	}
}

// BenchmarkEncodeRow: one 256-d row to its half and int8 rows, as every stored vector (and every vector a restart
// reloads) is encoded.
func BenchmarkEncodeRow(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, 256)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	half, q8 := make([]uint16, len(v)), make([]int8, len(v))
	for b.Loop() {
		encodeRow(half, q8, v)
	}
}

// toHalf's bit operations round as the float16 package does, over a sweep of float32 values through half's
// normal range and its edges.
func TestToHalfMatchesFloat16(t *testing.T) {
	check := func(x float32) {
		h, r := toHalf(x)
		f := float16.Fromfloat32(x)
		if h != f.Bits() || math.Float32bits(r) != math.Float32bits(f.Float32()) {
			t.Fatalf("%v (%#x): half %#x value %v, float16 %#x %v", x, math.Float32bits(x), h, r, f.Bits(), f.Float32())
		}
	}
	// Every 61st float32 from below half's least subnormal to past its largest finite value, both signs; the
	// stride is odd, so every pattern of the low bits that rounding reads comes up.
	for b := uint32(0x33000000); b < 0x47900000; b += 61 {
		check(math.Float32frombits(b))
		check(math.Float32frombits(b | 1<<31))
	}
	for _, x := range []float32{0, 1, -1, 65504, 65519.99, 65520, 1e9, float32(math.Inf(1)), 0x1p-14, 0x1p-15,
		0x1p-24, 0x1p-25, 1 + 0x1p-11, 1 + 0x1p-11 + 0x1p-23, 1 + 3*0x1p-11} {
		check(x)
		check(-x)
	}
}

// roundHalf127 rounds 127 × h as round127 does, for every half value in [-1, 1].
func TestRoundHalf127MatchesRound127(t *testing.T) {
	for b := range uint32(1 << 16) {
		h := float16.Frombits(uint16(b)).Float32()
		if !(h >= -1 && h <= 1) {
			continue
		}
		if got, want := roundHalf127(h), round127(127*h); got != want {
			t.Fatalf("half %#x (%v): %d, want %d", b, h, got, want)
		}
	}
}

// fromHalf's bit operations give the float16 package's value for every half.
func TestFromHalfMatchesFloat16(t *testing.T) {
	for b := range uint32(1 << 16) {
		got, want := fromHalf(uint16(b)), float16.Frombits(uint16(b)).Float32()
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("half %#x: %v, want %v", b, got, want)
		}
	}
}

// Rows handed out by RowsHalf and loaded back by LoadHalf give the index it had, slabs and searches alike; into a
// namespace that holds rows the load is an upsert; rows no encoding gives are refused whole.
func TestLoadHalfMatchesWhatRowsHalfGave(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	for _, o := range []Options{{}, {Exact: true}} {
		const dim = 96
		src, dst := NewWithOptions(dim, o), NewWithOptions(dim, o)
		fill(t, src, r, "u", 300)
		var ids []string
		var half []uint16
		var scales []float32
		src.RowsHalf("u", func(id string, h []uint16, s float32) {
			ids, half, scales = append(ids, id), append(half, h...), append(scales, s)
		})
		if err := dst.LoadHalf("u", ids, half, scales); err != nil {
			t.Fatal(err)
		}
		a, b := src.lookup("u"), dst.lookup("u")
		if !slices.Equal(a.half, b.half) || !slices.Equal(a.scale, b.scale) || !slices.Equal(a.q8, b.q8) ||
			!slices.Equal(a.ids, b.ids) {
			t.Fatalf("exact %v: the loaded slabs differ from the ones written", o.Exact)
		}
		for range 5 {
			q := randUnit(r, dim)
			if got, want := dst.Search("u", q, 10, nil), src.Search("u", q, 10, nil); !slices.Equal(got, want) {
				t.Fatalf("exact %v: search %v, want %v", o.Exact, got, want)
			}
		}
		// Into a namespace that holds rows: each replaces its id's row, the same bits.
		if err := dst.LoadHalf("u", ids[:1], slices.Clone(half[:dim]), scales[:1]); err != nil {
			t.Fatal(err)
		}
		if dst.NamespaceLen("u") != 300 || !slices.Equal(dst.lookup("u").half, a.half) {
			t.Fatalf("exact %v: a load into a full namespace changed it", o.Exact)
		}
	}
	ix := New(2)
	for _, bad := range []struct {
		half  []uint16
		scale float32
	}{
		{[]uint16{0x3c01, 0}, 1},                   // above 1
		{[]uint16{0x7e00, 0}, 1},                   // NaN
		{[]uint16{0x7c00, 0}, 1},                   // infinity
		{[]uint16{0x3c00, 0}, -1},                  // negative scale
		{[]uint16{0x3c00, 0}, float32(math.NaN())}, // NaN scale
	} {
		if err := ix.LoadHalf("v", []string{"a"}, bad.half, []float32{bad.scale}); err == nil || ix.NamespaceLen("v") != 0 {
			t.Fatalf("load of %#x × %v: %v", bad.half, bad.scale, err)
		}
	}
	if err := ix.LoadHalf("v", []string{"a", "b"}, make([]uint16, 4), []float32{1}); !errors.Is(err, ErrDimension) {
		t.Fatalf("load of 2 rows with 1 scale: %v", err)
	}
}

// EncodeHalf of DecodeHalf's output is the same row: records that keep embeddings this way give the index back
// the rows it had.
func TestEncodeHalfOfDecodeHalfIsTheSameRow(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for _, mag := range []float64{1e-30, 1e-3, 1, 1e6} {
		for _, dim := range []int{1, 7, 256, 1536} {
			v := make([]float32, dim)
			for i := range v {
				v[i] = float32(r.NormFloat64() * mag)
			}
			half := make([]uint16, dim)
			scale := EncodeHalf(half, v)
			dec := make([]float32, dim)
			if !DecodeHalf(dec, half, scale) {
				t.Fatalf("mag %g dim %d: DecodeHalf refused its own row", mag, dim)
			}
			again := make([]uint16, dim)
			if s := EncodeHalf(again, dec); s != scale || !slices.Equal(again, half) {
				t.Fatalf("mag %g dim %d: re-encoded row differs (scale %v, was %v)", mag, dim, s, scale)
			}
		}
	}
	// A largest component whose reciprocal overflows: zeros, which decode, not infinities.
	for _, v := range [][]float32{{1e-39, 5e-40}, {1.4e-45, 0}} {
		half := make([]uint16, len(v))
		scale := EncodeHalf(half, v)
		if dec := make([]float32, len(v)); scale != 0 || !DecodeHalf(dec, half, scale) || dec[0] != 0 {
			t.Errorf("%v: scale %v, row %v does not decode to zeros", v, scale, half)
		}
	}
	if DecodeHalf(make([]float32, 1), []uint16{0x4000}, 1) { // 2.0: no row EncodeHalf writes
		t.Error("DecodeHalf accepted a component above 1")
	}
	if DecodeHalf(make([]float32, 1), []uint16{0x3c00}, -1) {
		t.Error("DecodeHalf accepted a negative scale")
	}
}
