package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/memcluster/memcluster/backup"
)

func newBackupVerifyCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "verify FILE",
		Short: "Check a backup file without a cluster",
		Long: `Read the whole backup FILE (a path, file:///path or s3://bucket/key?…) and check its structure, every
part's checksum and the whole file's. Exits non-zero with one line naming the problem.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, sum, err := verifyLocation(cmd, g, args[0], "verifying")
			if err != nil {
				return fmt.Errorf("backup verify %s: %w", args[0], err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), map[string]any{"event": "verified", "file": args[0], "manifest": m, "summary": sum})
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "ok %s: format %d, taken %s, %d shards (%d buckets), %d memories, %d cold segments, %d members, sha256 %s\n",
				args[0], m.Version, sum.Finished.Format("2006-01-02T15:04:05Z"), sum.Shards, m.Buckets, sum.Memories, sum.ColdObjects,
				len(m.Members), sum.SHA256)
			return err
		},
	}
}

// verifyLocation reads and checks the backup at loc, showing progress.
func verifyLocation(cmd *cobra.Command, g *globals, loc, verb string) (backup.Manifest, backup.Summary, error) {
	rc, size, err := backup.Open(cmd.Context(), loc)
	if err != nil {
		return backup.Manifest{}, backup.Summary{}, err
	}
	defer rc.Close()
	prog := newBackupProgress(g, cmd.OutOrStdout(), cmd.ErrOrStderr(), verb, size)
	defer prog.finish()
	return backup.Verify(io.TeeReader(rc, prog), prog.part)
}
