package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
)

// TestMCP runs a real memnode with tokens and attaches two MCP clients (the official go-sdk and
// mark3labs/mcp-go, each with its default negotiation) over both transports: stdio through the real
// `memctl mcp` binary, and Streamable HTTP at the node's /mcp with a token. Each initializes, lists the tools,
// remembers something and finds it with memory_search and memory_get; a call for a user the token may not
// access is a tool error carrying the API's message, never the memory.
func TestMCP(t *testing.T) {
	needProcesses(t)
	authFile := filepath.Join(t.TempDir(), "auth.json")
	if err := os.WriteFile(authFile, []byte(authFileConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	p := newProc(t, "n1")
	p.start("--dev", "--auth-file", authFile, "--cluster-token", tokCluster)
	t.Cleanup(func() {
		if t.Failed() {
			p.dumpLog()
		}
	})
	waitFor(t, 60*time.Second, "a ready node", func() bool {
		code, body := do(t, p.http, tokAdmin, apiCall{"GET", "/v1/cluster/status", ""})
		return code == 200 && strings.Contains(body, `"healthy":true`)
	})
	// zeta's memory, which no acme token may reach through MCP.
	if code, body := do(t, p.http, tokZetaWriter, calls("zeta-1", "")["put"]); code != 201 {
		t.Fatalf("zeta put: %d %s", code, body)
	}
	_, memctlBin := binaries(t)
	url := "http://" + p.http + "/mcp"
	if code, body := do(t, p.http, "", apiCall{"POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`}); code != 401 {
		t.Errorf("/mcp without a token: %d %s", code, body)
	}
	stdioArgs := func(user string) []string {
		return []string{"--addr", "http://" + p.http, "--token", tokAcmeWriter, "mcp", "--user", user}
	}
	cases := []struct {
		name    string
		connect func(ctx context.Context, user string) (mcpSession, error)
	}{
		{"go-sdk/stdio", func(ctx context.Context, user string) (mcpSession, error) {
			return connectSDK(ctx, sdkStdio(memctlBin, stdioArgs(user)...))
		}},
		{"go-sdk/http", func(ctx context.Context, _ string) (mcpSession, error) {
			return connectSDK(ctx, sdkHTTP(url, tokAcmeWriter))
		}},
		{"mcp-go/stdio", func(ctx context.Context, user string) (mcpSession, error) {
			return mcpgoAt(ctx, "")(mcpgoStdio(memctlBin, stdioArgs(user)...))
		}},
		{"mcp-go/http", func(ctx context.Context, _ string) (mcpSession, error) {
			return mcpgoAt(ctx, "")(mcpgoHTTP(url, tokAcmeWriter))
		}},
		// An older client: the initialize handshake of 2025-06-18, over both transports.
		{"mcp-go@2025-06-18/stdio", func(ctx context.Context, user string) (mcpSession, error) {
			return mcpgoAt(ctx, "2025-06-18")(mcpgoStdio(memctlBin, stdioArgs(user)...))
		}},
		{"mcp-go@2025-06-18/http", func(ctx context.Context, _ string) (mcpSession, error) {
			return mcpgoAt(ctx, "2025-06-18")(mcpgoHTTP(url, tokAcmeWriter))
		}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			user := "acme-mcp-" + string(rune('a'+i))
			s, err := tc.connect(ctx, user)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer s.close()
			t.Logf("negotiated protocol %s", s.protocol())
			if !slices.Contains([]string{"2025-06-18", "2025-11-25", "2026-07-28"}, s.protocol()) {
				t.Errorf("negotiated %q, want 2025-06-18 or later", s.protocol())
			}
			mcpScenario(ctx, t, s, user)
			mcpWorkspace(ctx, t, s, user, func(dir string) {
				if out, errOut, code := memctl(t, p.http, "--token", tokAcmeWriter, "workspace", "sync", "--dir", dir, "--user", user); code != 0 {
					t.Fatalf("workspace sync: exit %d %s %s", code, out, errOut)
				}
			})
		})
	}
}

// mcpScenario: tools/list, remember → memory_search → memory_get, and a foreign user refused.
func mcpScenario(ctx context.Context, t *testing.T, s mcpSession, user string) {
	t.Helper()
	names, err := s.tools(ctx)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	for _, want := range []string{"memory_search", "memory_get", "memory_update", "remember", "forget", "context", "session_append", "session_flush", "facts"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	call := func(name string, args map[string]any) string {
		t.Helper()
		args["userId"] = user
		text, isErr, err := s.call(ctx, name, args)
		if err != nil || isErr {
			t.Fatalf("%s: error %v, tool error %v: %s", name, err, isErr, text)
		}
		return text
	}
	call("remember", map[string]any{"text": "My favourite tea is jasmine tea."})
	var found struct {
		Results []struct{ ID, Text string }
	}
	if err := json.Unmarshal([]byte(call("memory_search", map[string]any{"query": "jasmine tea"})), &found); err != nil ||
		len(found.Results) == 0 || !strings.Contains(found.Results[0].Text, "jasmine") {
		t.Fatalf("memory_search after remember: %+v, %v", found, err)
	}
	if got := call("memory_get", map[string]any{"id": found.Results[0].ID}); !strings.Contains(got, "jasmine") {
		t.Errorf("memory_get: %s", got)
	}
	if got := call("memory_update", map[string]any{"id": found.Results[0].ID, "importance": 0.9}); !strings.Contains(got, `"importance":0.9`) {
		t.Errorf("memory_update: %s", got)
	}
	if got := call("context", map[string]any{"query": "what tea do I like?"}); !strings.Contains(got, "jasmine") {
		t.Errorf("context: %s", got)
	}
	// Another tenant's user: a tool error with the API's message, not the memory.
	text, isErr, err := s.call(ctx, "memory_search", map[string]any{"userId": "zeta-1", "query": "hello", "minScore": 0})
	if err != nil || !isErr || !strings.Contains(text, `token may not access user "zeta-1"`) || strings.Contains(text, "hello from") {
		t.Errorf("foreign user: error %v, tool error %v: %s", err, isErr, text)
	}
}

// mcpWorkspace: an OpenClaw workspace synced, then found by memory_search (its path and line range) and read
// back by memory_get by path; a path outside the workspace is a tool error.
func mcpWorkspace(ctx context.Context, t *testing.T, s mcpSession, user string, sync func(dir string)) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	var daily strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&daily, "- note %d about the weekly sync\n", i)
	}
	daily.WriteString("- the boat is moored at pier nineteen in Harlingen\n")
	files := map[string]string{"MEMORY.md": "# Memory\n\n- prefers green tea\n", "memory/2026-11-20.md": daily.String()}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sync(dir)
	call := func(name string, args map[string]any) (string, bool) {
		t.Helper()
		args["userId"] = user
		text, isErr, err := s.call(ctx, name, args)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return text, isErr
	}
	text, isErr := call("memory_search", map[string]any{"workspace": true, "query": "boat moored pier Harlingen"})
	var found struct {
		Results []struct {
			Path               string
			StartLine, EndLine int
		}
	}
	if err := json.Unmarshal([]byte(text), &found); isErr || err != nil || len(found.Results) == 0 ||
		found.Results[0].Path != "memory/2026-11-20.md" || found.Results[0].StartLine > 31 || found.Results[0].EndLine < 31 {
		t.Fatalf("workspace memory_search: %v %s", err, text)
	}
	if text, isErr := call("memory_get", map[string]any{"path": "memory/2026-11-20.md", "startLine": 31, "lines": 1}); isErr ||
		!strings.Contains(text, "pier nineteen") || strings.Contains(text, "note 30") {
		t.Errorf("memory_get by path: %s", text)
	}
	if text, isErr := call("memory_get", map[string]any{"path": "../etc/passwd"}); !isErr || !strings.Contains(text, "path") {
		t.Errorf("memory_get ../etc/passwd: tool error %v: %s", isErr, text)
	}
}

// mcpgoAt initializes the mcp-go client it is handed at version ("": the client's default negotiation).
func mcpgoAt(ctx context.Context, version string) func(*mcpgoclient.Client, error) (mcpSession, error) {
	return func(c *mcpgoclient.Client, err error) (mcpSession, error) {
		if err != nil {
			return nil, err
		}
		return connectMCPGo(ctx, c, version)
	}
}
