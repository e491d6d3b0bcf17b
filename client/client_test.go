package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
)

// These tests cover only the client's own HTTP behaviour (addresses, escaping,
// error decoding, timeouts); the success paths are exercised end to end
// against real nodes.

func newTestClient(t *testing.T, h http.HandlerFunc, opts ...Option) *Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := New(srv.URL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func writeError(w http.ResponseWriter, status int, code, msg, field string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(apiv1.Error{Error: apiv1.ErrorBody{Code: code, Message: msg, Field: field}})
}

func TestNewAddr(t *testing.T) {
	for _, tc := range []struct {
		addr, want string // want "" means an error
	}{
		{"http://127.0.0.1:7480", "http://127.0.0.1:7480"},
		{"http://127.0.0.1:7480/", "http://127.0.0.1:7480"},
		{"127.0.0.1:7480", "http://127.0.0.1:7480"},
		{"localhost:7480", "http://localhost:7480"},
		{"https://mem.example/prefix/", "https://mem.example/prefix"},
		{"", ""},
		{"ftp://x", ""},
		{"http://", ""},
		{"http://h?x=1", ""},
		{"http://user:pw@h", ""},
	} {
		c, err := New(tc.addr)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("New(%q) = %s, want an error", tc.addr, c.Addr())
		case tc.want != "" && err != nil:
			t.Errorf("New(%q): %v", tc.addr, err)
		case tc.want != "" && c.Addr() != tc.want:
			t.Errorf("New(%q).Addr() = %q, want %q", tc.addr, c.Addr(), tc.want)
		}
	}
	if _, err := New("http://h", WithTimeout(-time.Second)); err == nil {
		t.Error("negative timeout accepted")
	}
}

func TestAPIErrorJSON(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		status                 int
		code, msg, field, want string
		is                     error
	}{
		{"field in message", 400, "invalid_argument", "user_id: required", "user_id", "400 invalid_argument: user_id: required", memory.ErrInvalid},
		{"field apart", 400, "invalid_argument", "required", "user_id", "400 invalid_argument: user_id: required", memory.ErrInvalid},
		{"no field", 404, "not_found", "memory 01J not found", "", "404 not_found: memory 01J not found", memory.ErrNotFound},
		{"unavailable", 503, "unavailable", "shard 3 has no leader", "", "503 unavailable: shard 3 has no leader", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
				writeError(w, tc.status, tc.code, tc.msg, tc.field)
			})
			_, err := c.Search(context.Background(), apiv1.SearchRequest{Query: "q"})
			ae, ok := errors.AsType[*APIError](err)
			if !ok {
				t.Fatalf("err = %v (%T), want *APIError", err, err)
			}
			if ae.Status != tc.status || ae.Code != tc.code || ae.Field != tc.field {
				t.Errorf("got %+v", ae)
			}
			if err.Error() != tc.want {
				t.Errorf("Error() = %q, want %q", err.Error(), tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("errors.Is(err, %v) = false", tc.is)
			}
		})
	}
}

func TestAPIErrorNotJSON(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"html", "<html>\n<body>upstream\tdown</body>\n</html>", 502, "502 bad gateway: <html> <body>upstream down</body> </html>"},
		{"empty", "", 503, "503 service unavailable"},
		{"json without code", `{"message":"nope"}`, 500, `500 internal server error: {"message":"nope"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			})
			err := c.Health(context.Background())
			if ae, ok := errors.AsType[*APIError](err); !ok || ae.Status != tc.status || ae.Code != "" {
				t.Fatalf("err = %#v", err)
			}
			if err.Error() != tc.want {
				t.Errorf("Error() = %q, want %q", err.Error(), tc.want)
			}
		})
	}
}

func TestAPIErrorLongBodyCut(t *testing.T) {
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		_, _ = w.Write([]byte(strings.Repeat("x", 1<<20)))
	})
	err := c.Ready(context.Background())
	if err == nil || len(err.Error()) > 300 || !strings.HasSuffix(err.Error(), "…") {
		t.Fatalf("err = %.400v", err)
	}
}

func TestGetDeleteEscaping(t *testing.T) {
	const id, user = "a/b?c#d %e", "u&user_id=evil"
	var gotPath, gotUser, gotStale, gotMethod string
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		gotMethod, gotPath = r.Method, r.URL.EscapedPath()
		gotUser, gotStale = r.URL.Query().Get("user_id"), r.URL.Query().Get("stale")
		if n := len(r.URL.Query()["user_id"]); n != 1 {
			t.Errorf("%d user_id values", n)
		}
		writeError(w, 404, "not_found", "no such memory", "")
	})
	wantPath := "/v1/memories/a%2Fb%3Fc%23d%20%25e"

	_, err := c.Get(context.Background(), user, id, true)
	if !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("Get err = %v", err)
	}
	if gotMethod != "GET" || gotPath != wantPath || gotUser != user || gotStale != "true" {
		t.Errorf("Get sent %s %s user_id=%q stale=%q", gotMethod, gotPath, gotUser, gotStale)
	}

	_, _ = c.Get(context.Background(), user, id, false)
	if gotStale != "" {
		t.Errorf("stale=%q sent when not asked for", gotStale)
	}

	if err := c.Delete(context.Background(), user, id); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("Delete err = %v", err)
	}
	if gotMethod != "DELETE" || gotPath != wantPath || gotUser != user {
		t.Errorf("Delete sent %s %s user_id=%q", gotMethod, gotPath, gotUser)
	}
}

func TestLocalIDChecks(t *testing.T) {
	c, err := New("http://127.0.0.1:1") // never dialled: the checks come first
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ user, id string }{{"", "x"}, {"u", ""}, {"u", "."}, {"u", ".."}} {
		if _, err := c.Get(context.Background(), tc.user, tc.id, false); !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("Get(%q, %q) err = %v, want ErrInvalid", tc.user, tc.id, err)
		}
		if err := c.Delete(context.Background(), tc.user, tc.id); !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("Delete(%q, %q) err = %v, want ErrInvalid", tc.user, tc.id, err)
		}
	}
}

func TestHeaders(t *testing.T) {
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Authorization"); got != "Bearer s3cret" {
			writeError(w, 401, "unauthenticated", "bad token "+got, "")
			return
		}
		if r.Method == "POST" && r.Header.Get("Content-Type") != "application/json" {
			writeError(w, 415, "invalid_argument", "content type", "")
			return
		}
		writeError(w, 418, "teapot", "headers ok", "")
	}, WithBearerToken("s3cret"))
	_, err := c.Put(context.Background(), apiv1.PutRequest{UserID: "u", Text: "t"})
	if err == nil || err.Error() != "418 teapot: headers ok" {
		t.Fatalf("err = %v", err)
	}
}

func TestTimeout(t *testing.T) {
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}, WithTimeout(50*time.Millisecond))
	start := time.Now()
	_, err := c.ClusterStatus(context.Background())
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no answer within 50ms") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestHealthOK(t *testing.T) {
	var paths []string
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		_, _ = w.Write([]byte("ok"))
	})
	if err := c.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	if strings.Join(paths, " ") != "/healthz /readyz" {
		t.Errorf("paths = %v", paths)
	}
}
