package ui

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestServesEmbeddedAssetsWithAStrictPolicy(t *testing.T) {
	h, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"/ui/": "<title>memcluster console</title>", "/ui/js/app.js": "import"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), want) {
			t.Errorf("%s: %d, body without %q", path, w.Code, want)
		}
		if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("%s: CSP %q", path, csp)
		}
	}
	if _, err := New(Options{Prefix: "ui"}); err == nil {
		t.Error("a prefix without slashes was accepted")
	}
}
