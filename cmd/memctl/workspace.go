package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/workspace"
)

func newWorkspaceCmd(g *globals) *cobra.Command {
	return newGroupCmd("workspace", "OpenClaw Markdown workspaces (MEMORY.md, memory/*.md): sync them into the index, export them back",
		newWorkspaceSyncCmd(g),
		newWorkspaceExportCmd(g),
	)
}

// workspaceRef is the --dir, --user and --agent every workspace command names, and sync's chunk parameters.
type workspaceRef struct {
	dir, user, agent string
	chunk            apiv1.ChunkParams
}

func (r *workspaceRef) addFlags(f *pflag.FlagSet) {
	f.StringVar(&r.dir, "dir", "", "workspace directory holding MEMORY.md and memory/ (required; env MEMCTL_WORKSPACE_DIR)")
	f.StringVar(&r.user, "user", "", "user id (required)")
	f.StringVar(&r.agent, "agent", "", "agent id: each agent of a user has its own workspace (default: the user's own)")
}

// syncer checks the flags and returns a Syncer talking to --addr; progress lines go to progress.
func (r *workspaceRef) syncer(g *globals, progress io.Writer) (*workspace.Syncer, error) {
	if r.dir == "" {
		r.dir = g.env("MEMCTL_WORKSPACE_DIR")
	}
	if r.dir == "" {
		return nil, errors.New("--dir is required")
	}
	if err := requireUser(r.user); err != nil {
		return nil, err
	}
	c, err := g.client()
	if err != nil {
		return nil, err
	}
	return workspace.New(workspace.Options{Dir: r.dir, User: r.user, Agent: r.agent, Client: c, Chunk: r.chunk,
		Progress: func(msg string) { fmt.Fprintln(progress, msg) }})
}
