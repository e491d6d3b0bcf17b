package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/memcluster/memcluster/apiv1"
)

// wsPut is the body of a put of a one-chunk file; text nil sends no text.
func wsPut(path, content string, text *string) string {
	req := apiv1.WorkspacePutRequest{Path: path, Size: len(content), SHA256: hashText(content),
		Chunk: apiv1.DefaultChunkParams}
	if content != "" {
		req.Chunks = []apiv1.WorkspaceChunk{{Hash: hashText(content), StartLine: 1, EndLine: countLines(content),
			EndByte: len(content), Text: text}}
	}
	b, _ := json.Marshal(req)
	return string(b)
}

func TestWorkspaceRoutes(t *testing.T) {
	n := startTestNode(t, Options{})
	base := "/v1/users/alice/workspace"
	private, daily := "I keep my passport in the blue drawer\n", "Met Bob about the quarterly roadmap\nBought oat milk\n"
	for path, content := range map[string]string{"MEMORY.md": private, "memory/2026-01-02.md": daily} {
		if w := serve(n.api, "PUT", base+"/files", "", wsPut(path, content, &content)); w.Code != http.StatusOK {
			t.Fatalf("put %s: %d %s", path, w.Code, w.Body)
		}
	}

	// Paths outside MEMORY.md and memory/*.md are refused, naming the problem; nothing is read.
	for _, p := range []string{"../etc/passwd", "/etc/passwd", "memory/../x", "memory/sub/a.md", "notes.md", "memory/a.txt"} {
		w := serve(n.api, "GET", base+"/lines?path="+p, "", "")
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"field":"path"`) {
			t.Errorf("lines %s: %d %s", p, w.Code, w.Body)
		}
	}

	// Lines read back byte for byte; a group session is never given MEMORY.md.
	w := serve(n.api, "GET", base+"/lines?path=memory/2026-01-02.md&start_line=2&lines=1", "", "")
	var got apiv1.WorkspaceLines
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || got.Text != "Bought oat milk\n" || got.EndLine != 2 {
		t.Fatalf("lines: %d %s", w.Code, w.Body)
	}
	if w := serve(n.api, "GET", base+"/lines?path=MEMORY.md&session_type=group", "", ""); w.Code != http.StatusNotFound {
		t.Fatalf("group read of MEMORY.md: %d %s", w.Code, w.Body)
	}
	for session, want := range map[string]int{"private": 1, "group": 0} {
		body := fmt.Sprintf(`{"query":"passport blue drawer","minScore":0,"session_type":%q}`, session)
		w := serve(n.api, "POST", base+"/search", "", body)
		var res apiv1.WorkspaceSearchResponse
		_ = json.Unmarshal(w.Body.Bytes(), &res)
		hits := 0
		for _, h := range res.Results {
			if h.Path == "MEMORY.md" {
				hits++
				if h.StartLine != 1 || h.EndLine != 1 || h.Provider != "hashed" || h.Model == "" {
					t.Errorf("hit %+v", h)
				}
			}
		}
		if w.Code != http.StatusOK || hits != want {
			t.Errorf("%s search: MEMORY.md %d times, want %d: %s", session, hits, want, w.Body)
		}
	}

	// A put that does not rebuild its declared bytes, or leaves out a text the server lacks, writes nothing.
	before := userDigest(t, n, "alice")
	other := "something else\n"
	bad := strings.Replace(wsPut("memory/2026-01-02.md", other, &other), hashText(other), hashText("x"), 1)
	for name, body := range map[string]string{"wrong hash": bad, "missing text": wsPut("memory/x.md", other, nil)} {
		if w := serve(n.api, "PUT", base+"/files", "", body); w.Code != http.StatusBadRequest {
			t.Errorf("%s: %d %s", name, w.Code, w.Body)
		}
	}
	if userDigest(t, n, "alice") != before {
		t.Fatal("a refused put changed the user's state")
	}

	// Deleting a file removes its manifest and its chunk records.
	w = serve(n.api, "DELETE", base+"/files?path=MEMORY.md", "", "")
	if !strings.Contains(w.Body.String(), `"removed":1`) {
		t.Fatalf("delete: %d %s", w.Code, w.Body)
	}
	if w := serve(n.api, "GET", base+"/lines?path=MEMORY.md", "", ""); w.Code != http.StatusNotFound {
		t.Fatalf("deleted file still read: %d %s", w.Code, w.Body)
	}
}
