package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memcluster/memcluster/memory"
)

func newGetCmd(g *globals) *cobra.Command {
	var user string
	var stale bool
	cmd := &cobra.Command{
		Use:   "get --user U [--stale] ID",
		Short: "Print one memory",
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireUser(user); err != nil {
				return err
			}
			id, err := idArg(args)
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			m, err := c.Get(cmd.Context(), user, id, stale)
			if err != nil {
				return fmt.Errorf("get %s: %w", id, err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), m)
			}
			return printMemory(cmd.OutOrStdout(), m)
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "user id (required)")
	cmd.Flags().BoolVar(&stale, "stale", false, "let a follower answer from its replica without asking the leader")
	return cmd
}

// printMemory writes key/value lines. The text comes last and whole: a
// multi-line text goes below its key, indented, so it cannot break the layout.
func printMemory(w io.Writer, m memory.Memory) error {
	tw := newTable(w)
	row := func(k, v string) { fmt.Fprintf(tw, "%s:\t%s\n", k, v) }
	row("id", m.ID)
	row("user_id", m.UserID)
	row("agent_id", orDash(m.AgentID))
	row("run_id", orDash(m.RunID))
	row("type", string(m.Type))
	row("occurred_at", fmtTime(m.OccurredAt))
	row("created_at", fmtTime(m.CreatedAt))
	row("importance", strconv.FormatFloat(m.Importance, 'g', -1, 64))
	row("tags", orDash(strings.Join(m.Tags, ", ")))
	row("entities", orDash(strings.Join(m.Entities, ", ")))
	meta := make([]string, 0, len(m.Metadata))
	for _, k := range slices.Sorted(maps.Keys(m.Metadata)) {
		meta = append(meta, k+"="+m.Metadata[k])
	}
	row("metadata", orDash(strings.Join(meta, ", ")))
	if m.EmbedModel != "" {
		row("embed_model", m.EmbedModel)
	}
	multi := strings.ContainsAny(m.Text, "\n\t")
	if !multi {
		row("text", m.Text)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if multi {
		_, err := fmt.Fprintf(w, "text:\n  %s\n", strings.ReplaceAll(m.Text, "\n", "\n  "))
		return err
	}
	return nil
}
