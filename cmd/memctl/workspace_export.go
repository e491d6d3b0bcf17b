package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newWorkspaceExportCmd(g *globals) *cobra.Command {
	ref := &workspaceRef{}
	cmd := &cobra.Command{
		Use:   "export --dir D --user U [--agent A]",
		Short: "Write the synced MEMORY.md and memory/*.md back into a directory, byte for byte",
		Long: `Write every file of the workspace back under --dir exactly as it was last
synced (same bytes). Each file's bytes are checked against its manifest before
anything is written; each file is replaced atomically. Files the index does not
hold are left alone.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := ref.syncer(g, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			rep, err := s.Export(cmd.Context())
			if err != nil {
				return fmt.Errorf("workspace export: %w", err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), rep)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "exported %d files (%d bytes) to %s\n", len(rep.Files), rep.Bytes, ref.dir)
			return err
		},
	}
	ref.addFlags(cmd.Flags())
	return cmd
}
