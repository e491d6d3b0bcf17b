package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memcluster/memcluster/apiv1"
)

type factsOptions struct {
	user, asOf string
	all        bool
}

func newFactsCmd(g *globals) *cobra.Command {
	o := &factsOptions{}
	cmd := &cobra.Command{
		Use:   "facts --user U [--all | --as-of T]",
		Short: "List a user's facts: current ones, every one, or those believed at a time",
		Long: `List a user's semantic facts, oldest first: by default the current ones; with
--all also superseded and retracted ones; with --as-of those that were believed
at that time (recorded by then and not yet superseded or retracted).`,
		Example: `  memctl facts --user alice
  memctl facts --user alice --as-of 2026-03-01T00:00:00Z -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			asOf, err := o.check()
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			facts, err := c.Facts(cmd.Context(), o.user, o.all, asOf)
			if err != nil {
				return fmt.Errorf("facts: %w", err)
			}
			if facts == nil {
				facts = []apiv1.Fact{} // print [] rather than null, as the server does
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), apiv1.FactsResponse{UserID: o.user, Facts: facts})
			}
			return printFacts(cmd.OutOrStdout(), facts)
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

func (o *factsOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.user, "user", "", "user id (required)")
	f.BoolVar(&o.all, "all", false, "also superseded and retracted facts")
	f.StringVar(&o.asOf, "as-of", "", "the facts believed at this time, RFC 3339")
}

// check validates the flags and returns --as-of (zero when not given).
func (o *factsOptions) check() (time.Time, error) {
	if err := requireUser(o.user); err != nil {
		return time.Time{}, err
	}
	if o.asOf == "" {
		return time.Time{}, nil
	}
	if o.all {
		// The server would silently prefer as_of; say so instead.
		return time.Time{}, errors.New("--all and --as-of do not combine: --as-of already lists past facts as they were then")
	}
	return parseTime("as-of", o.asOf)
}
