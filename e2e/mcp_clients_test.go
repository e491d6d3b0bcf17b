package e2e

import (
	"context"
	"net/http"
	"os/exec"
	"strings"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpSession is what the MCP tests need of a client, so the same scenario runs on the official go-sdk and on
// mark3labs/mcp-go, each with its default negotiation.
type mcpSession interface {
	protocol() string
	tools(ctx context.Context) ([]string, error)
	call(ctx context.Context, name string, args map[string]any) (text string, isError bool, err error)
	close()
}

// sdkSession is a go-sdk client session.
type sdkSession struct{ s *sdk.ClientSession }

func connectSDK(ctx context.Context, t sdk.Transport) (mcpSession, error) {
	c := sdk.NewClient(&sdk.Implementation{Name: "e2e-go-sdk", Version: "1"}, nil)
	s, err := c.Connect(ctx, t, nil)
	if err != nil {
		return nil, err
	}
	return sdkSession{s}, nil
}

func sdkStdio(memctl string, args ...string) sdk.Transport {
	return &sdk.CommandTransport{Command: exec.Command(memctl, args...)}
}

func sdkHTTP(url, token string) sdk.Transport {
	return &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}}}
}

func (s sdkSession) protocol() string { return s.s.InitializeResult().ProtocolVersion }

func (s sdkSession) tools(ctx context.Context) ([]string, error) {
	res, err := s.s.ListTools(ctx, nil)
	if err != nil {
		return nil, err
	}
	return toolNames(res.Tools, func(tl *sdk.Tool) string { return tl.Name }), nil
}

func (s sdkSession) call(ctx context.Context, name string, args map[string]any) (string, bool, error) {
	res, err := s.s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError, nil
}

func (s sdkSession) close() { _ = s.s.Close() }

// bearer adds a bearer token to every request of the go-sdk's HTTP client.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpgoSession is a mark3labs/mcp-go client.
type mcpgoSession struct {
	c   *mcpgoclient.Client
	ver string
}

// connectMCPGo initializes c; version "" keeps the client's default negotiation, another pins that revision.
func connectMCPGo(ctx context.Context, c *mcpgoclient.Client, version string) (mcpSession, error) {
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	res, err := c.Initialize(ctx, mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{ProtocolVersion: version,
		ClientInfo: mcpgo.Implementation{Name: "e2e-mcp-go", Version: "1"}}})
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return mcpgoSession{c: c, ver: res.ProtocolVersion}, nil
}

func mcpgoStdio(memctl string, args ...string) (*mcpgoclient.Client, error) {
	return mcpgoclient.NewStdioMCPClient(memctl, nil, args...)
}

func mcpgoHTTP(url, token string) (*mcpgoclient.Client, error) {
	return mcpgoclient.NewStreamableHttpClient(url,
		mcpgotransport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
}

func (s mcpgoSession) protocol() string { return s.ver }

func (s mcpgoSession) tools(ctx context.Context) ([]string, error) {
	res, err := s.c.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		return nil, err
	}
	return toolNames(res.Tools, func(tl mcpgo.Tool) string { return tl.Name }), nil
}

func (s mcpgoSession) call(ctx context.Context, name string, args map[string]any) (string, bool, error) {
	res, err := s.c.CallTool(ctx, mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: name, Arguments: args}})
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcpgo.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError, nil
}

func (s mcpgoSession) close() { _ = s.c.Close() }

func toolNames[T any](tools []T, name func(T) string) []string {
	out := make([]string, len(tools))
	for i, tl := range tools {
		out[i] = name(tl)
	}
	return out
}
