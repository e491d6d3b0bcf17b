package cluster

import (
	"bytes"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// A forwarded command is read whole into a slice of its declared length; a body shorter than declared is an
// error, and so is one over the limit, declared or not.
func TestReadCommand(t *testing.T) {
	cmd := bytes.Repeat([]byte("c"), 5000)
	r := httptest.NewRequest("POST", "/internal/v1/shards/0/propose", bytes.NewReader(cmd))
	got, err := readCommand(r, maxForwardedCommand)
	if err != nil || !bytes.Equal(got, cmd) || cap(got) != len(cmd) {
		t.Fatalf("declared length: %d bytes (cap %d), %v", len(got), cap(got), err)
	}

	r = httptest.NewRequest("POST", "/internal/v1/shards/0/propose", bytes.NewReader(cmd[:10]))
	r.ContentLength = 20
	if _, err := readCommand(r, maxForwardedCommand); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("short body: %v, want unexpected EOF", err)
	}

	for _, declared := range []bool{false, true} {
		for body, over := range map[string]bool{"abcdef": true, "abcd": false} {
			r = httptest.NewRequest("POST", "/internal/v1/shards/0/propose", io.NopCloser(strings.NewReader(body)))
			r.ContentLength = -1
			if declared {
				r.ContentLength = int64(len(body))
			}
			got, err := readCommand(r, 4)
			if over && (err == nil || !strings.Contains(err.Error(), "over the 4")) {
				t.Fatalf("%q, length declared %v, over the limit: %v", body, declared, err)
			}
			if !over && (err != nil || string(got) != body) {
				t.Fatalf("%q, length declared %v, at the limit: %q, %v", body, declared, got, err)
			}
		}
	}
}
