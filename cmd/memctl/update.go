package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memcluster/memcluster/apiv1"
)

type updateOptions struct {
	user       string
	tags, meta []string
	importance float64
}

func newUpdateCmd(g *globals) *cobra.Command {
	o := &updateOptions{}
	cmd := &cobra.Command{
		Use:   "update --user U ID [TEXT... | -]",
		Short: "Change a memory in place (text, tags, metadata, importance)",
		Long: `Change a memory in place. TEXT (the remaining arguments, or "-" for stdin) replaces
its text, which is embedded again; --tag and --meta replace its tags and metadata as a whole;
--importance replaces its importance. Give at least one. The memory's history records an UPDATE.`,
		Example: `  memctl update --user alice 01JD... "Alice now prefers green tea"
  memctl update --user alice --tag prefs --tag drinks --importance 0.8 01JD...`,
		RunE: func(cmd *cobra.Command, args []string) error {
			id, req, err := o.request(cmd.Flags(), args, cmd.InOrStdin())
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			m, err := c.Update(cmd.Context(), o.user, id, req)
			if err != nil {
				return fmt.Errorf("update %s: %w", id, err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), m)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "updated %s\n", m.ID)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.user, "user", "", "user id (required)")
	f.StringArrayVar(&o.tags, "tag", nil, "tag; repeat for more (replaces every tag)")
	f.StringArrayVar(&o.meta, "meta", nil, "metadata key=value; repeat for more (replaces all metadata)")
	f.Float64Var(&o.importance, "importance", 0, "importance 0..1")
	return cmd
}

// request builds the UpdateRequest from what was given; nothing given is an error before dialling.
func (o *updateOptions) request(fs *pflag.FlagSet, args []string, in io.Reader) (string, apiv1.UpdateRequest, error) {
	var req apiv1.UpdateRequest
	if err := requireUser(o.user); err != nil {
		return "", req, err
	}
	if len(args) == 0 || args[0] == "" {
		return "", req, errors.New("missing ID")
	}
	id := args[0]
	if len(args) > 1 {
		text, err := textArg(args[1:], in, "TEXT")
		if err != nil {
			return "", req, err
		}
		req.Text = &text
	}
	if fs.Changed("tag") {
		req.Tags = &o.tags
	}
	if fs.Changed("meta") {
		md, err := parseMeta(o.meta)
		if err != nil {
			return "", req, err
		}
		req.Metadata = &md
	}
	if fs.Changed("importance") {
		if o.importance < 0 || o.importance > 1 {
			return "", req, fmt.Errorf("--importance %g: must be between 0 and 1", o.importance)
		}
		req.Importance = &o.importance
	}
	if req.Text == nil && req.Tags == nil && req.Metadata == nil && req.Importance == nil {
		return "", req, errors.New("nothing to change: give TEXT, --tag, --meta or --importance")
	}
	return id, req, nil
}
