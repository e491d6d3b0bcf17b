package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type rememberOptions struct {
	user, time string
}

func newRememberCmd(g *globals) *cobra.Command {
	o := &rememberOptions{}
	cmd := &cobra.Command{
		Use:   "remember --user U [--time T] TEXT... | -",
		Short: "Remember something explicitly: its facts go straight to long-term memory",
		Long: `Remember something explicitly ("remember that ..."): the text's facts are
decided at once (ADD, UPDATE, DELETE or NONE) with the confidence of an explicit
statement, and a sentence with no recognised fact is kept as a note. Questions
are still refused by the write gate.

TEXT is the remaining arguments joined by spaces, or "-" to read it from stdin
(a trailing newline is dropped). Prints one line per fact decision and per
rejected sentence; -o json prints the whole result.`,
		Example: `  memctl remember --user alice "My sister's birthday is on May 3"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			text, at, err := o.request(args, cmd.InOrStdin())
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			res, err := c.Remember(cmd.Context(), o.user, text, at)
			if err != nil {
				return fmt.Errorf("remember: %w", err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), res)
			}
			return printConsolidation(cmd.OutOrStdout(), res)
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

func (o *rememberOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.user, "user", "", "user id (required)")
	f.StringVar(&o.time, "time", "", "when it was said, RFC 3339 (default: when the node receives it)")
}

// request returns the text and the time (zero: let the node decide).
func (o *rememberOptions) request(args []string, in io.Reader) (string, time.Time, error) {
	if err := requireUser(o.user); err != nil {
		return "", time.Time{}, err
	}
	text, err := textArg(args, in, "TEXT")
	if err != nil {
		return "", time.Time{}, err
	}
	var at time.Time
	if o.time != "" {
		if at, err = parseTime("time", o.time); err != nil {
			return "", time.Time{}, err
		}
	}
	return text, at, nil
}
