package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/memcluster/memcluster/apiv1"
)

// Bounds of a --file read. A line is one small JSON object, so a long one is
// a wrong file; the sample bound keeps a runaway pipe from eating memory
// (the whole file is read and checked before anything is sent).
const (
	maxSampleLine    = 64 << 10
	maxFileSamples   = 1_000_000
	sampleLineFormat = `{"time": "2025-01-02T15:04:05Z", "value": 72.5}`
)

// sampleLine is one line of a samples file; pointers tell absent from zero.
type sampleLine struct {
	Time  *string  `json:"time"`
	Value *float64 `json:"value"`
}

// readSamples reads JSON Lines samples from r; name (the path, or "stdin")
// and the 1-based line number prefix every error. Blank lines are skipped.
func readSamples(r io.Reader, name string) ([]apiv1.Sample, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxSampleLine)
	var out []apiv1.Sample
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if len(out) == maxFileSamples {
			return nil, fmt.Errorf("%s: more than %d samples; split the file", name, maxFileSamples)
		}
		s, err := parseSampleLine(line)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, n, err)
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s line %d: longer than %d bytes", name, n+1, maxSampleLine)
		}
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no samples (want JSON Lines like %s)", name, sampleLineFormat)
	}
	return out, nil
}

func parseSampleLine(line []byte) (apiv1.Sample, error) {
	var sl sampleLine
	dec := json.NewDecoder(bytes.NewReader(line))
	// A misspelt "time" would otherwise silently become "now".
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sl); err != nil {
		return apiv1.Sample{}, fmt.Errorf("want %s: %s", sampleLineFormat, strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return apiv1.Sample{}, fmt.Errorf("want one JSON object per line, found more after it")
	}
	if sl.Value == nil {
		return apiv1.Sample{}, errors.New(`no "value"`)
	}
	s := apiv1.Sample{Value: *sl.Value}
	if sl.Time != nil {
		t, err := time.Parse(time.RFC3339Nano, *sl.Time)
		if err != nil {
			return apiv1.Sample{}, fmt.Errorf("time %q: want RFC 3339 like 2025-01-02T15:04:05Z", *sl.Time)
		}
		s.Time = &t
	}
	return s, nil
}

// parseValue reads --value: a finite number.
func parseValue(v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if errors.Is(err, strconv.ErrRange) || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("--value %q: must be a finite number", v)
	}
	if err != nil {
		return 0, fmt.Errorf("--value %q: not a number", v)
	}
	return f, nil
}

// chunkSamples splits samples into requests of at most apiv1.MaxSamples.
func chunkSamples(signal string, samples []apiv1.Sample) []apiv1.SignalsRequest {
	var out []apiv1.SignalsRequest
	for len(samples) > 0 {
		n := min(len(samples), apiv1.MaxSamples)
		out = append(out, apiv1.SignalsRequest{Signal: signal, Samples: samples[:n:n]})
		samples = samples[n:]
	}
	return out
}
