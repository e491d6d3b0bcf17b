package storage

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/memory"
)

func benchMemory(r *rand.Rand, i int) memory.Memory {
	emb := make([]float32, 256)
	for j := range emb {
		emb[j] = r.Float32()
	}
	return memory.Memory{ID: fmt.Sprintf("01JBENCH%018d", i), UserID: fmt.Sprintf("user-%d", i%1000),
		Type: memory.Episodic, Text: "Booked a morning flight to Paris for the conference on Monday",
		OccurredAt: time.Unix(1700000000, 0).UTC(), CreatedAt: time.Unix(1700000000, 0).UTC(),
		Tags: []string{"travel"}, Importance: 0.5, Embedding: emb, EmbedModel: "hashed-v1/d256"}
}

func BenchmarkMemoryKey(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = MemoryKey(7, "user-123", "01JBENCH000000000000000001")
	}
}

func BenchmarkDecodeMemoryKey(b *testing.B) {
	k := MemoryKey(7, "user-123", "01JBENCH000000000000000001")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, _, err := DecodeMemoryKey(k); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordCodec encodes and decodes a record in each format, of a short text and of a conversation turn
// of about 1 KB (LongMemEval's are 1.1 KB on average), with and without its 256-d embedding.
func BenchmarkRecordCodec(b *testing.B) {
	long := strings.Repeat("assistant: Sure! Here's a \"stronger\" brew:\n1. Use a coarse grind.\n", 16)
	for _, text := range []string{"", long} {
		m := benchMemory(rand.New(rand.NewPCG(1, 2)), 1)
		if text != "" {
			m.Text = text
		}
		m.Metadata = map[string]string{"session_id": "answer_626e93c4_2", "role": "assistant", "turn": "3"}
		for _, f := range []RecordFormat{RecordF32, RecordHalf, RecordBinary} {
			name := fmt.Sprintf("text=%d/format=%d", len(m.Text), f)
			b.Run(name+"/op=encode", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := EncodeMemoryAs(&m, f); err != nil {
						b.Fatal(err)
					}
				}
			})
			rec, _ := EncodeMemoryAs(&m, f)
			for op, decode := range map[string]func([]byte) (memory.Memory, error){
				"decode": DecodeMemory, "decode-without-embedding": DecodeMemoryWithoutEmbedding} {
				b.Run(name+"/op="+op, func(b *testing.B) {
					b.ReportAllocs()
					b.SetBytes(int64(len(rec)))
					for b.Loop() {
						if _, err := decode(rec); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkFSMApplyBatch applies raft batches of put commands (one memory each, as single puts arrive) to a
// shard on Pebble's in-memory FS: the state machine's cost per replicated write, without indexes.
func BenchmarkFSMApplyBatch(b *testing.B) {
	for _, batch := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("entries=%d", batch), func(b *testing.B) {
			db, err := Open("db", Options{FS: vfs.NewMem(), Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			f, _ := NewShardFSM(db, 1, nil, slog.New(slog.DiscardHandler), nil)
			r := rand.New(rand.NewPCG(3, 4))
			cmds := make([][]byte, 256)
			for i := range cmds {
				if cmds[i], err = EncodePut([]memory.Memory{benchMemory(r, i)}); err != nil {
					b.Fatal(err)
				}
			}
			idx := uint64(0)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				logs := make([]*raft.Log, batch)
				for j := range logs {
					idx++
					logs[j] = &raft.Log{Index: idx, Term: 1, Type: raft.LogCommand, Data: cmds[int(idx)%len(cmds)]}
				}
				f.ApplyBatch(logs)
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}
