package mcp

import (
	"errors"
	"fmt"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memcluster/memcluster/client"
)

// Errors of the adapter. An API failure is not one of them: it reaches the MCP caller as a tool error carrying
// the API's own message.
var (
	// ErrOptions marks invalid Options.
	ErrOptions = errors.New("invalid MCP options")
	// ErrNoUser: a tool call named no user_id and the server has no default user.
	ErrNoUser = errors.New("user_id: required (this server has no default user)")
)

// ClientFunc returns the API client one tool call goes through. header is the HTTP header of the MCP request
// that carried the call (nil over stdio), so that memnode can pass on the caller's own token.
type ClientFunc func(header http.Header) (*client.Client, error)

// Options configures New.
type Options struct {
	// Client returns the API client of a tool call. Required.
	Client ClientFunc
	// User is the user_id of tool calls that name none (memctl mcp --user). Default: none; each call names one.
	User string
	// Version is the server version reported to clients. Default "dev".
	Version string
}

func (o *Options) validate() error {
	if o.Client == nil {
		return fmt.Errorf("%w: Client is required", ErrOptions)
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	return nil
}

// New returns an MCP server with memcluster's tools (tools.go), ready for any go-sdk transport.
func New(opts Options) (*sdk.Server, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "memcluster", Title: "memcluster memory", Version: opts.Version},
		&sdk.ServerOptions{Instructions: instructions})
	addTools(s, &tools{opts: opts})
	return s, nil
}

const instructions = "Long-term memory of one user. Call memory_search (or context, for a packaged prompt " +
	"block) before answering questions about the user's past, preferences or facts; call remember when the user " +
	"states something worth keeping; use session_append/session_flush to record a conversation as it happens."

// tools holds what every tool handler needs.
type tools struct{ opts Options }

// call resolves the tool call's client and user.
func (t *tools) call(req *sdk.CallToolRequest, user string) (*client.Client, string, error) {
	if user == "" {
		user = t.opts.User
	}
	if user == "" {
		return nil, "", ErrNoUser
	}
	var h http.Header
	if req != nil && req.Extra != nil {
		h = req.Extra.Header
	}
	c, err := t.opts.Client(h)
	if err != nil {
		return nil, "", fmt.Errorf("api client: %w", err)
	}
	return c, user, nil
}
