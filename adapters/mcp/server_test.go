package mcp

import (
	"context"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// connect serves New(opts) to an SDK client over the SDK's in-memory transport.
func connect(t *testing.T, opts Options) *sdk.ClientSession {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := sdk.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := s.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// TestToolsDescribeThemselves: every tool has a description and an object input schema.
func TestToolsDescribeThemselves(t *testing.T) {
	cs := connect(t, Options{Client: InProcessClient(http.NotFoundHandler())})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 9 {
		t.Errorf("%d tools, want 9", len(res.Tools))
	}
	for _, tl := range res.Tools {
		if tl.Description == "" || tl.InputSchema == nil {
			t.Errorf("%s: description %q, schema %v", tl.Name, tl.Description, tl.InputSchema)
		}
	}
}

// TestFailuresAreToolErrors: no user, a bad argument and a handler that panics each end one call as a tool
// error (isError) with a message, and the server goes on answering. (API refusals, from a real node, are
// e2e/mcp_test.go's.)
func TestFailuresAreToolErrors(t *testing.T) {
	api := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })
	cs := connect(t, Options{Client: InProcessClient(api)})
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"memory_search", map[string]any{"query": "q"}, "user_id: required"},
		{"memory_get", map[string]any{"id": "01JD0000000000000000000000", "userId": "x"}, "handler panic: boom"},
		{"memory_search", map[string]any{"query": "q", "userId": "x", "from": "yesterday"}, "from: want an RFC 3339 time"},
	} {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if err != nil {
			t.Fatalf("%s: %v", tc.tool, err)
		}
		text := ""
		if len(res.Content) > 0 {
			text = res.Content[0].(*sdk.TextContent).Text
		}
		if !res.IsError || !strings.Contains(text, tc.want) {
			t.Errorf("%s %v: isError %v, %q; want %q", tc.tool, tc.args, res.IsError, text, tc.want)
		}
	}
}
