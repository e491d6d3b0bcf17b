package storage

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/memcluster/memcluster/memory"
)

func randomEmbedding(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64()) * 0.1
	}
	return v
}

// A half record keeps the embedding as the vector index stores its rows, so re-encoding what it decodes gives the
// same bytes: records copied through decode and encode (a split, a re-put fact) do not drift.
func TestHalfRecordRoundTripsToTheSameBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, dim := range []int{0, 1, 7, 256, 1536} {
		m := seedMemory()
		m.Embedding = randomEmbedding(r, dim)
		if dim == 0 {
			m.Embedding = nil
		}
		rec, err := EncodeMemoryAs(&m, RecordHalf)
		if err != nil {
			t.Fatal(err)
		}
		f32, _ := EncodeMemory(&m)
		if dim > 0 && len(rec) != len(f32)-2*dim+4 {
			t.Errorf("dim %d: half record %d bytes, float32 record %d", dim, len(rec), len(f32))
		}
		got, err := DecodeMemory(rec)
		if err != nil {
			t.Fatalf("dim %d: %v", dim, err)
		}
		if got.Text != m.Text || got.UserID != m.UserID || len(got.Embedding) != dim {
			t.Fatalf("dim %d: decoded %+v", dim, got)
		}
		for i, x := range got.Embedding {
			if d := x - m.Embedding[i]; d > 1e-3 || d < -1e-3 {
				t.Fatalf("dim %d: component %d is %v, was %v", dim, i, x, m.Embedding[i])
			}
		}
		again, err := EncodeMemoryAs(&got, RecordHalf)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, rec) {
			t.Errorf("dim %d: re-encoded half record differs", dim)
		}
	}
}

// Records written before half records existed still read, exactly.
func TestFloat32RecordsStillRead(t *testing.T) {
	m := seedMemory()
	m.Embedding = randomEmbedding(rand.New(rand.NewPCG(3, 4)), 64)
	rec, _ := EncodeMemory(&m)
	if RecordFormat(rec[0]) != RecordF32 {
		t.Fatalf("EncodeMemory wrote format %d", rec[0])
	}
	got, err := DecodeMemory(rec)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.Embedding {
		if got.Embedding[i] != m.Embedding[i] {
			t.Fatalf("component %d: %v, want %v", i, got.Embedding[i], m.Embedding[i])
		}
	}
}

func TestDecodeRefusesABadHalfRecord(t *testing.T) {
	m := seedMemory()
	rec, _ := EncodeMemoryAs(&m, RecordHalf)
	for name, b := range map[string][]byte{
		"component above one": append(bytes.Clone(rec[:len(rec)-2]), 0x00, 0x40), // 2.0
		"short":               rec[:len(rec)-1],
		"long":                append(bytes.Clone(rec), 0),
		"unknown version":     append([]byte{3}, rec[1:]...),
	} {
		if _, err := DecodeMemory(b); !errors.Is(err, ErrBadRecord) {
			t.Errorf("%s: err %v, want ErrBadRecord", name, err)
		}
	}
}

// A put's entry carries its records in the proposer's format; apply stores them as they are.
func TestHalfPutIsStoredAsProposed(t *testing.T) {
	m := seedMemory()
	cmd, err := Encoder{Records: RecordHalf}.Put([]memory.Memory{m})
	if err != nil {
		t.Fatal(err)
	}
	c, err := DecodeCommand(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.PutRecords) != 1 || RecordFormat(c.PutRecords[0][0]) != RecordHalf {
		t.Fatalf("put records %v", c.PutRecords)
	}
	txn, err := Encoder{Records: RecordHalf}.UserTxn(UserTxnPayload{UserID: m.UserID, Puts: []memory.Memory{m}})
	if err != nil {
		t.Fatal(err)
	}
	// A user transaction's apply encodes its puts again, in RecordF32 on every build; its entry is the smaller.
	if c, err = DecodeCommand(txn); err != nil || len(c.UserTxn.Puts) != 1 || len(c.UserTxn.Puts[0].Embedding) != 2 {
		t.Fatalf("user txn: %v %+v", err, c.UserTxn)
	}
}
