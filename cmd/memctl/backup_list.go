package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/memcluster/memcluster/backup"
)

func newBackupListCmd(g *globals) *cobra.Command {
	var from string
	cmd := &cobra.Command{
		Use:   "list --from DIR",
		Short: "List the backups in a directory or bucket (what memnode --backup-to writes)",
		Long: `List the backups (*.mcbak) in DIR (a path, file:///dir or s3://bucket/prefix?…), oldest first, with
their time, size, shards and memories as their trailers state (memctl backup verify checks a file).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" {
				return errors.New("backup list: --from is required")
			}
			list, err := backup.List(cmd.Context(), from)
			if err != nil {
				return fmt.Errorf("backup list: %w", err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), map[string]any{"backups": list})
			}
			tw := newTable(cmd.OutOrStdout())
			fmt.Fprintln(tw, "NAME\tTIME\tSIZE\tSHARDS\tMEMORIES")
			for _, l := range list {
				shards, mems := "?", l.Problem
				if l.Summary != nil {
					shards, mems = fmt.Sprint(l.Summary.Shards), fmt.Sprint(l.Summary.Memories)
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", l.Name, l.Time.UTC().Format("2006-01-02T15:04:05Z"), l.Size, shards, mems)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the directory or bucket: a path, file:///dir or s3://bucket/prefix?region=…")
	return cmd
}
