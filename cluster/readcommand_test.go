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
// error, and one without a length is read to the limit.
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

	r = httptest.NewRequest("POST", "/internal/v1/shards/0/propose", io.NopCloser(strings.NewReader("abcdef")))
	r.ContentLength = -1
	if got, err := readCommand(r, 4); err != nil || string(got) != "abcd" {
		t.Fatalf("no length: %q, %v", got, err)
	}
}
