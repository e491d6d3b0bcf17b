package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/client"
)

type listOptions struct {
	user, agent, run, from, to, cursor string
	types, tags                        []string
	limit                              int
}

func newListCmd(g *globals) *cobra.Command {
	o := &listOptions{}
	cmd := &cobra.Command{
		Use:   "list --user U [--type T] [--agent A] [--run R] [--tag T] [--from T] [--to T] [--limit N] [--cursor C]",
		Short: "List a user's memories page by page, oldest first, with filters",
		Long: `List one page of a user's memories in creation order (GET /v1/users/{user_id}/memories). --type and
--tag repeat (a memory carries every tag given); --from and --to bound occurred_at to [from, to).
The page ends with the cursor of the next one ("next: C"; next_cursor with -o json): pass it as
--cursor. No cursor means the last page.`,
		Example: `  memctl list --user alice --type semantic --limit 20
  memctl list --user alice --cursor MDFKRDAw -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := o.options()
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			page, err := c.List(cmd.Context(), o.user, opts)
			if err != nil {
				return fmt.Errorf("list: %w", err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), page)
			}
			return printList(cmd.OutOrStdout(), page)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.user, "user", "", "user id (required)")
	f.StringSliceVar(&o.types, "type", nil, "memory type: working, episodic, semantic, perceptual (repeatable)")
	f.StringVar(&o.agent, "agent", "", "only this agent's memories")
	f.StringVar(&o.run, "run", "", "only this run's memories")
	f.StringSliceVar(&o.tags, "tag", nil, "memories carrying this tag (repeatable: every one)")
	f.StringVar(&o.from, "from", "", "occurred at or after, RFC 3339")
	f.StringVar(&o.to, "to", "", "occurred before, RFC 3339")
	f.IntVar(&o.limit, "limit", apiv1.DefaultListLimit, fmt.Sprintf("memories per page, 1 to %d", apiv1.MaxListLimit))
	f.StringVar(&o.cursor, "cursor", "", "the next page's cursor, as a previous page printed it")
	return cmd
}

func (o *listOptions) options() (client.ListOptions, error) {
	opts := client.ListOptions{Types: o.types, AgentID: o.agent, RunID: o.run, Tags: o.tags, Limit: o.limit, Cursor: o.cursor}
	if err := requireUser(o.user); err != nil {
		return opts, err
	}
	if o.limit < 1 || o.limit > apiv1.MaxListLimit {
		return opts, fmt.Errorf("--limit %d: want 1 to %d", o.limit, apiv1.MaxListLimit)
	}
	var err error
	if o.from != "" {
		if opts.From, err = parseTime("from", o.from); err != nil {
			return opts, err
		}
	}
	if o.to != "" {
		opts.To, err = parseTime("to", o.to)
	}
	return opts, err
}

func printList(w io.Writer, page apiv1.ListResponse) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tTYPE\tOCCURRED\tAGENT\tTAGS\tTEXT")
	for _, m := range page.Memories {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", m.ID, m.Type, fmtTime(m.OccurredAt), orDash(m.AgentID),
			orDash(strings.Join(m.Tags, ",")), oneLine(m.Text, 60))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if page.NextCursor != "" {
		_, err := fmt.Fprintf(w, "next: %s\n", page.NextCursor)
		return err
	}
	return nil
}
