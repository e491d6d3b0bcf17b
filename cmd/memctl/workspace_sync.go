package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/workspace"
)

func newWorkspaceSyncCmd(g *globals) *cobra.Command {
	ref := &workspaceRef{}
	var watch bool
	cmd := &cobra.Command{
		Use:   "sync --dir D --user U [--agent A] [--watch]",
		Short: "Index MEMORY.md and memory/*.md: send changed chunks, remove those of deleted or shortened files",
		Long: `Index an OpenClaw workspace: MEMORY.md and memory/*.md, in chunks of about 400
tokens with 80 tokens of overlap. Only chunks the index does not hold are sent
(and embedded); chunks of deleted or shortened files are removed. Each file is
one atomic request. With --watch, syncs again 1.5 s after the files stop
changing, until interrupted.

Prints files scanned, chunks sent, unchanged and removed (one line per sync);
progress per file goes to stderr. -o json prints the report (one object per
sync).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := ref.syncer(g, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if !watch {
				rep, err := s.Sync(cmd.Context())
				if err != nil {
					return fmt.Errorf("workspace sync: %w", err)
				}
				return printSyncReport(out, g.json(), rep)
			}
			return s.Watch(cmd.Context(), func(rep workspace.Report, err error) {
				if err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "workspace sync: %v\n", err)
					return
				}
				_ = printSyncReport(out, g.json(), rep)
			})
		},
	}
	ref.addFlags(cmd.Flags())
	cmd.Flags().IntVar(&ref.chunk.Tokens, "chunk-tokens", apiv1.DefaultChunkParams.Tokens,
		"tokens per chunk (about 4 characters each); a change re-indexes every file")
	cmd.Flags().IntVar(&ref.chunk.Overlap, "chunk-overlap", apiv1.DefaultChunkParams.Overlap,
		"tokens each chunk repeats from the one before; a change re-indexes every file")
	cmd.Flags().BoolVar(&watch, "watch", false, "keep syncing as the files change (debounced 1.5 s) until interrupted")
	return cmd
}

func printSyncReport(w io.Writer, asJSON bool, r workspace.Report) error {
	if asJSON {
		return printJSON(w, r)
	}
	_, err := fmt.Fprintf(w, "%d files scanned: %d chunks sent, %d unchanged, %d removed (%d files changed, %d deleted)\n",
		r.Scanned, r.Sent, r.Unchanged, r.Removed, r.FilesChanged, r.FilesDeleted)
	return err
}
