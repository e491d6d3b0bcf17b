package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// FuzzReadSamples: the JSON Lines reader of `perceive --file` (an imported file) never panics, either
// rejects a file with an error naming it or returns at least one finite sample, one per non-blank line.
func FuzzReadSamples(f *testing.F) {
	for _, s := range []string{
		`{"time": "2025-01-02T15:04:05Z", "value": 72.5}`,
		"{\"value\": 1}\n\n{\"value\": -2e3, \"time\": \"2025-01-02T15:04:05.123+02:00\"}\n",
		`{"value": 1e400}`,
		`{"value": 1}{"value": 2}`,
		`{"tiem": "2025-01-02T15:04:05Z", "value": 1}`,
		"\xff\xfe",
		strings.Repeat(`{"value": 3}`+"\n", 50),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		samples, err := readSamples(bytes.NewReader(data), "in.jsonl")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "in.jsonl") && !strings.HasPrefix(err.Error(), "read in.jsonl") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		lines := 0
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines++
			}
		}
		if len(samples) == 0 || len(samples) != lines {
			t.Fatalf("%d samples from %d lines", len(samples), lines)
		}
		for _, s := range samples {
			if math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
				t.Fatalf("non-finite sample %v", s.Value)
			}
		}
	})
}
