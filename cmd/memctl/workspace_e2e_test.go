package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/client"
	"github.com/memcluster/memcluster/workspace"
)

// writeWorkspace writes files (path relative to dir -> content).
func writeWorkspace(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// dailyLog is a daily file of n lines, long enough for several chunks, with one line to search for.
func dailyLog(day string, n int, needle string, at int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", day)
	for i := 2; i <= n; i++ {
		if i == at {
			b.WriteString(needle + "\n")
			continue
		}
		fmt.Fprintf(&b, "- %s note %03d: reviewed the backlog and answered mail\n", day, i)
	}
	return b.String()
}

// findHit searches the workspace and returns the first hit of path, if any.
func findHit(t *testing.T, c *client.Client, user, query, path string) (apiv1.WorkspaceHit, bool) {
	t.Helper()
	res, err := c.WorkspaceSearch(context.Background(), user, apiv1.WorkspaceSearchRequest{Query: query})
	if err != nil {
		t.Fatalf("search %q: %v", query, err)
	}
	for _, h := range res.Results {
		if h.Path == path {
			return h, true
		}
	}
	return apiv1.WorkspaceHit{}, false
}

// TestWorkspaceAgainstRealNode syncs a MEMORY.md and three daily files into a real --dev memnode, finds a
// line by search with its path and line range, re-syncs an edit (only the changed chunks are sent), is refused
// a path outside the workspace, exports the files back byte for byte, and follows an edit with --watch.
func TestWorkspaceAgainstRealNode(t *testing.T) {
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("builds memnode and runs a process")
	}
	addr := startEvalNode(t)
	c, err := client.New(addr, client.WithTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	const user = "ws-alice"
	dir := t.TempDir()
	needle := "- decided the zebra migration window is Thursday at 14:00"
	files := map[string]string{
		"MEMORY.md":            "# Memory\n\nAlice prefers tea over coffee.\nHer passport is in the blue drawer.\n",
		"memory/2026-01-01.md": dailyLog("2026-01-01", 40, "", 0),
		"memory/2026-01-02.md": dailyLog("2026-01-02", 150, needle, 90),
		"memory/2026-01-03.md": dailyLog("2026-01-03", 30, "", 0),
	}
	writeWorkspace(t, dir, files)
	args := []string{"workspace", "sync", "--dir", dir, "--user", user}

	var first workspace.Report
	runJSON(t, addr, "", &first, args...)
	if first.Scanned != 4 || first.Sent < 6 || first.Unchanged != 0 || first.Removed != 0 || first.FilesChanged != 4 {
		t.Fatalf("first sync: %+v", first)
	}

	hit, ok := findHit(t, c, user, "zebra migration window Thursday", "memory/2026-01-02.md")
	if !ok || hit.StartLine > 90 || hit.EndLine < 90 || hit.Text == "" || len([]rune(hit.Text)) > 700 {
		t.Fatalf("search for the needle (line 90): %+v %v", hit, ok)
	}

	// Edit one line near the end of the long file: only the chunks holding it are sent again.
	edited := strings.Replace(files["memory/2026-01-02.md"], "note 140:", "note 140 (edited):", 1)
	writeWorkspace(t, dir, map[string]string{"memory/2026-01-02.md": edited})
	out, stderr, err := run(t, nil, "", append([]string{"--addr", addr}, args...)...)
	if err != nil {
		t.Fatalf("second sync: %v %s", err, stderr)
	}
	var sent, unchanged, removed int
	if _, err := fmt.Sscanf(out, "4 files scanned: %d chunks sent, %d unchanged, %d removed (1 files changed, 0 deleted)",
		&sent, &unchanged, &removed); err != nil || sent < 1 || sent > 2 || removed < 1 || unchanged != first.Sent-sent {
		t.Fatalf("second sync printed %q (%v); first sent %d", out, err, first.Sent)
	}
	var again workspace.Report
	runJSON(t, addr, "", &again, args...)
	if again.Sent != 0 || again.Removed != 0 || again.Unchanged != first.Sent {
		t.Fatalf("sync without changes: %+v", again)
	}

	// memory_get: a line range back, and paths outside the workspace refused with a 400 naming the path.
	lines, err := c.WorkspaceLines(context.Background(), user, apiv1.WorkspaceLinesRequest{
		RelPath: "memory/2026-01-02.md", StartLine: 90, Lines: 1})
	if err != nil || lines.Text != needle+"\n" {
		t.Fatalf("lines 90..90: %+v %v", lines, err)
	}
	for _, p := range []string{"../etc/passwd", "/etc/passwd", "memory/../x"} {
		_, err := c.WorkspaceLines(context.Background(), user, apiv1.WorkspaceLinesRequest{RelPath: p})
		var ae *client.APIError
		if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || ae.Field != "path" {
			t.Fatalf("reading %s: %v", p, err)
		}
	}

	// Export round trip: the same bytes.
	back := t.TempDir()
	if _, stderr, err := run(t, nil, "", "--addr", addr, "workspace", "export", "--dir", back, "--user", user); err != nil {
		t.Fatalf("export: %v %s", err, stderr)
	}
	files["memory/2026-01-02.md"] = edited
	for p, want := range files {
		got, err := os.ReadFile(filepath.Join(back, filepath.FromSlash(p)))
		if err != nil || !bytes.Equal(got, []byte(want)) {
			t.Fatalf("exported %s differs (%v)", p, err)
		}
	}

	// --watch picks up an edit: wait until the new line is found, then stop the command.
	ctx, cancel := context.WithCancel(context.Background())
	var watchOut, watchErr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		cmd := newRootCmd(strings.NewReader(""), &watchOut, &watchErr, nil)
		cmd.SetArgs(append([]string{"--addr", addr, "--timeout", "30s"}, append(args, "--watch")...))
		done <- cmd.ExecuteContext(ctx)
	}()
	fresh := "- the okapi budget review moved to Friday"
	writeWorkspace(t, dir, map[string]string{"memory/2026-01-03.md": files["memory/2026-01-03.md"] + fresh + "\n"})
	deadline := time.Now().Add(60 * time.Second)
	for {
		if h, ok := findHit(t, c, user, "okapi budget review Friday", "memory/2026-01-03.md"); ok && h.EndLine == 31 {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("--watch did not index the edit within 60s: %v", <-done)
		}
		time.Sleep(100 * time.Millisecond) // polling a condition, not waiting for time to pass
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("watch: %v %s", err, watchErr.String())
	}
	if !strings.Contains(watchOut.String(), "(1 files changed, 0 deleted)") {
		t.Fatalf("watch printed %q", watchOut.String())
	}

	// Other chunk parameters re-index every file: all texts sent again, every old record replaced.
	var reindexed workspace.Report
	runJSON(t, addr, "", &reindexed, append(args, "--chunk-tokens", "200", "--chunk-overlap", "40")...)
	if reindexed.FilesChanged != 4 || reindexed.Unchanged != 0 || reindexed.Sent <= first.Sent || reindexed.Removed < first.Sent {
		t.Fatalf("sync with other chunk parameters: %+v (first %+v)", reindexed, first)
	}

	// A deleted file's chunks leave the index.
	if err := os.Remove(filepath.Join(dir, "memory", "2026-01-01.md")); err != nil {
		t.Fatal(err)
	}
	var del workspace.Report
	runJSON(t, addr, "", &del, append(args, "--chunk-tokens", "200", "--chunk-overlap", "40")...)
	if del.Scanned != 3 || del.FilesDeleted != 1 || del.Removed < 1 {
		t.Fatalf("sync after deleting a file: %+v", del)
	}
}

// TestWorkspaceSyncRefusesBadInput stops before any request: a missing flag, or a file that cannot be indexed.
func TestWorkspaceSyncRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	_, _, err := run(t, nil, "", "--addr", unreachable, "workspace", "sync", "--user", "u")
	wantErr(t, err, "--dir is required")
	_, _, err = run(t, nil, "", "--addr", unreachable, "workspace", "sync", "--dir", dir, "--user", "u", "--chunk-overlap", "500")
	wantErr(t, err, "chunk.overlap")
	writeWorkspace(t, dir, map[string]string{"MEMORY.md": "fine\n", "memory/2026-01-01.md": "caf\xe9\n"})
	_, _, err = run(t, nil, "", "--addr", unreachable, "workspace", "sync", "--dir", dir, "--user", "u")
	wantErr(t, err, "memory/2026-01-01.md: not valid UTF-8")
}
