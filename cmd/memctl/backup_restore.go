package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/memcluster/memcluster/backup"
)

func newBackupRestoreCmd(g *globals) *cobra.Command {
	var in string
	var force bool
	cmd := &cobra.Command{
		Use:   "restore --in FILE",
		Short: "Restore a backup into a fresh cluster",
		Long: `Restore the backup FILE into the cluster at --addr, which must have formed with the backup's shard count
(--shards); any node count works, and the backup's splits are replayed. memctl verifies FILE first; the node
then reads and checks all of it again before it writes anything, and installs each shard through raft on its
leader. A corrupt, truncated or foreign file is refused with nothing written, and so is a cluster that holds
memories, unless --force. If a shard fails, the shards restored before it are emptied again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if in == "" {
				return errors.New("backup restore: --in is required")
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if _, _, err := verifyLocation(cmd, g, in, "checking"); err != nil {
				return fmt.Errorf("backup restore: %s refused, nothing was written: %w", in, err)
			}
			rc, size, err := backup.Open(ctx, in)
			if err != nil {
				return fmt.Errorf("backup restore: %w", err)
			}
			defer rc.Close()
			prog := newBackupProgress(g, cmd.OutOrStdout(), cmd.ErrOrStderr(), "restoring", size)
			res, err := c.Restore(ctx, io.TeeReader(rc, prog), force)
			prog.finish()
			if err != nil {
				return fmt.Errorf("backup restore: %w", err)
			}
			return printBackupSummary(g, cmd.OutOrStdout(), prog.summary("restore", in, size, res.Memories, res.Shards, res.ColdObjects))
		},
	}
	cmd.Flags().StringVar(&in, "in", "", "the backup: a path, file:///path or s3://bucket/key?region=…")
	cmd.Flags().BoolVar(&force, "force", false, "restore into a cluster that holds memories (they are replaced)")
	return cmd
}
