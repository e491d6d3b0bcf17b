package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/memcluster/memcluster/backup"
	"github.com/memcluster/memcluster/client"
)

func newBackupCreateCmd(g *globals) *cobra.Command {
	var out string
	var coldRefs bool
	cmd := &cobra.Command{
		Use:   "create --out FILE",
		Short: "Back up the whole cluster while it serves traffic",
		Long: `Back up the whole cluster into FILE (a path, file:///path or s3://bucket/key?…). The node streams every
shard from its leader after a read barrier, so the backup holds every write acknowledged before the shard's
turn came. memctl checks the stream as it arrives and makes FILE appear only once all of it was written and
checked; a failure leaves nothing. Cold segments of an external store are included, or with --cold-refs
referenced by checksum.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return errors.New("backup create: --out is required")
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			sink, err := backup.Create(ctx, out)
			if err != nil {
				return fmt.Errorf("backup create: %w", err)
			}
			prog := newBackupProgress(g, cmd.OutOrStdout(), cmd.ErrOrStderr(), "backing up", -1)
			sum, n, err := streamBackup(ctx, c, sink, prog, coldRefs)
			prog.finish()
			if err != nil {
				sink.Abort()
				return fmt.Errorf("backup create: %w (nothing was written to %s)", err, out)
			}
			if err := sink.Commit(); err != nil {
				return fmt.Errorf("backup create: %w", err)
			}
			s := prog.summary("backup", out, n, sum.Memories, sum.Shards, sum.ColdObjects)
			s.SHA256 = sum.SHA256
			return printBackupSummary(g, cmd.OutOrStdout(), s)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "where to write the backup: a path, file:///path or s3://bucket/key?region=…")
	cmd.Flags().BoolVar(&coldRefs, "cold-refs", false, "reference the external cold segments by checksum instead of including them")
	return cmd
}

// streamBackup copies the node's stream into sink while checking it as it passes (every checksum, the trailer).
func streamBackup(ctx context.Context, c *client.Client, sink io.Writer, prog *backupProgress, refs bool) (backup.Summary, int64, error) {
	pr, pw := io.Pipe()
	type checked struct {
		sum backup.Summary
		err error
	}
	done := make(chan checked, 1)
	go func() {
		_, sum, err := backup.Verify(pr, prog.part)
		pr.CloseWithError(err) // a failed check stops the copy instead of leaving it blocked
		done <- checked{sum, err}
	}()
	n, err := c.Backup(ctx, io.MultiWriter(sink, pw, prog), refs)
	pw.CloseWithError(err)
	res := <-done
	switch {
	case res.err != nil:
		return res.sum, n, fmt.Errorf("the stream failed its check: %w", res.err)
	case err != nil:
		return res.sum, n, err
	}
	return res.sum, n, nil
}
