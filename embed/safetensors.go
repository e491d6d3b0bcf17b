package embed

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// tensor is one decoded safetensors entry, widened to float32.
type tensor struct {
	shape []int
	data  []float32
}

type tensorHeader struct {
	DType   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// maxHeaderBytes guards against a corrupt length prefix.
const maxHeaderBytes = 100 << 20

// parseSafetensors decodes a safetensors file: an 8-byte little-endian header
// length, a JSON header naming each tensor's dtype, shape and byte range, then
// the raw bytes. Only F32, F16 and BF16 tensors are decoded.
func parseSafetensors(file []byte) (map[string]tensor, error) {
	if len(file) < 8 {
		return nil, fmt.Errorf("%w: safetensors: file too short", ErrBadModel)
	}
	n := binary.LittleEndian.Uint64(file)
	if n > maxHeaderBytes || n > uint64(len(file)-8) {
		return nil, fmt.Errorf("%w: safetensors: header length %d exceeds file", ErrBadModel, n)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(file[8:8+n], &raw); err != nil {
		return nil, fmt.Errorf("%w: safetensors header: %v", ErrBadModel, err)
	}
	body := file[8+n:]
	out := make(map[string]tensor, len(raw))
	for _, name := range sortedKeys(raw) {
		if name == "__metadata__" {
			continue
		}
		var h tensorHeader
		if err := json.Unmarshal(raw[name], &h); err != nil {
			return nil, fmt.Errorf("%w: safetensors tensor %q: %v", ErrBadModel, name, err)
		}
		t, err := decodeTensor(h, body)
		if err != nil {
			return nil, fmt.Errorf("safetensors tensor %q: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

func decodeTensor(h tensorHeader, body []byte) (tensor, error) {
	size := map[string]int{"F32": 4, "F16": 2, "BF16": 2}[h.DType]
	if size == 0 {
		return tensor{}, fmt.Errorf("%w: dtype %s (want F32, F16 or BF16)", ErrUnsupported, h.DType)
	}
	count := 1
	for _, d := range h.Shape {
		if d < 0 || (d > 0 && count > math.MaxInt32/d) {
			return tensor{}, fmt.Errorf("%w: bad shape %v", ErrBadModel, h.Shape)
		}
		count *= d
	}
	start, end := h.Offsets[0], h.Offsets[1]
	if start < 0 || end < start || end > int64(len(body)) || end-start != int64(count*size) {
		return tensor{}, fmt.Errorf("%w: offsets %v do not fit shape %v %s in %d bytes", ErrBadModel, h.Offsets, h.Shape, h.DType, len(body))
	}
	b := body[start:end]
	data := make([]float32, count)
	for i := range data {
		switch h.DType {
		case "F32":
			data[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		case "F16":
			data[i] = halfToFloat(binary.LittleEndian.Uint16(b[2*i:]))
		case "BF16":
			data[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16)
		}
	}
	return tensor{shape: h.Shape, data: data}, nil
}

// halfToFloat widens an IEEE 754 binary16 value, subnormals, infinities and NaN included.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf or NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: frac · 2^-24
		v := float32(frac) / (1 << 24)
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
