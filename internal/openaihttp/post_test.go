package openaihttp

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfterParsing(t *testing.T) {
	if d := retryAfter("2"); d != 2*time.Second {
		t.Errorf("seconds: %v", d)
	}
	if d := retryAfter(time.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat)); d < time.Second || d > 3*time.Second {
		t.Errorf("date: %v", d)
	}
	if retryAfter("") != -1 || retryAfter("soon") != -1 {
		t.Error("absent or invalid must be -1")
	}
}
