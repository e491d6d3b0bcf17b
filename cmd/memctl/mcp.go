package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	mcpadapter "github.com/memcluster/memcluster/adapters/mcp"
	"github.com/memcluster/memcluster/client"
	"github.com/memcluster/memcluster/internal/buildinfo"
)

func newMCPCmd(g *globals) *cobra.Command {
	var user string
	cmd := &cobra.Command{
		Use:   "mcp --user U",
		Short: "Serve memory tools to a desktop agent over MCP (stdio)",
		Long: `Serve the MCP tools (memory_search, memory_get, memory_update, remember, forget, context, session_append,
session_flush, facts) on stdin/stdout for an agent that starts memctl as its MCP server. Every tool
call is an API call to --addr with --token; --user (env MEMCTL_USER) is the user of calls that name
none. Nothing but the protocol is written to stdout.`,
		Example: `  memctl --addr http://127.0.0.1:7480 --token "$TOKEN" mcp --user alice`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if v := g.env("MEMCTL_USER"); !cmd.Flags().Changed("user") && v != "" {
				user = v
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			s, err := mcpadapter.New(mcpadapter.Options{User: user, Version: buildinfo.Get().Version,
				Client: func(http.Header) (*client.Client, error) { return c, nil }})
			if err != nil {
				return err
			}
			t := &sdk.IOTransport{Reader: io.NopCloser(cmd.InOrStdin()), Writer: nopWriteCloser{cmd.OutOrStdout()}}
			if err := s.Run(cmd.Context(), t); err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("mcp: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "user id of tool calls that name none (env MEMCTL_USER)")
	return cmd
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
