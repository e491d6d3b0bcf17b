package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/client"
)

func newSessionCmd(g *globals) *cobra.Command {
	return newGroupCmd("session", "Working sessions: append turns, flush them into long-term memory, end them",
		newSessionAppendCmd(g),
		newSessionConsolidateCmd(g, "flush", "Consolidate what the session holds into episodes and facts; the session stays",
			(*client.Client).Flush),
		newSessionConsolidateCmd(g, "end", "Consolidate the session into episodes and facts, then drop it",
			(*client.Client).EndSession),
		newSessionShowCmd(g),
	)
}

// sessionRef is the --user and --run pair every session command names.
type sessionRef struct{ user, run string }

func (r *sessionRef) addRefFlags(f *pflag.FlagSet) {
	f.StringVar(&r.user, "user", "", "user id (required)")
	f.StringVar(&r.run, "run", "", "run id naming the session (required)")
}

func (r *sessionRef) check() error {
	if err := requireUser(r.user); err != nil {
		return err
	}
	return requireRun(r.run)
}

// newSessionConsolidateCmd is flush or end: they differ only in the call.
func newSessionConsolidateCmd(g *globals, name, short string,
	call func(*client.Client, context.Context, string, string) (apiv1.ConsolidationResult, error)) *cobra.Command {
	ref := &sessionRef{}
	cmd := &cobra.Command{
		Use:   name + " --user U --run R",
		Short: short,
		Long: short + `.

Prints one line per episode and per fact decision (ADD, UPDATE, DELETE or NONE,
with its reason), and one per sentence the write gate kept out; -o json prints
the whole result.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := ref.check(); err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			res, err := call(c, cmd.Context(), ref.user, ref.run)
			if err != nil {
				return fmt.Errorf("session %s %s: %w", name, ref.run, err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), res)
			}
			return printConsolidation(cmd.OutOrStdout(), res)
		},
	}
	ref.addRefFlags(cmd.Flags())
	return cmd
}

func newSessionShowCmd(g *globals) *cobra.Command {
	ref := &sessionRef{}
	cmd := &cobra.Command{
		Use:   "show --user U --run R",
		Short: "Print a working session: its window, summary, token estimate and pending count",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := ref.check(); err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			st, err := c.Session(cmd.Context(), ref.user, ref.run)
			if err != nil {
				return fmt.Errorf("session show %s: %w", ref.run, err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), st)
			}
			return printSession(cmd.OutOrStdout(), st)
		},
	}
	ref.addRefFlags(cmd.Flags())
	return cmd
}
