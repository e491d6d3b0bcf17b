package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// requireRun is the check of every session command: a session is named by its run.
func requireRun(r string) error {
	if r == "" {
		return errors.New("--run is required")
	}
	return nil
}

// optionalIDArg returns the ID argument, or "" when there is none.
func optionalIDArg(args []string) (string, error) {
	switch len(args) {
	case 0:
		return "", nil
	case 1:
		if args[0] == "" {
			return "", errors.New("ID is empty")
		}
		return args[0], nil
	}
	return "", fmt.Errorf("want at most one ID, got %d arguments", len(args))
}

// keyArg returns the single KEY argument (a pattern key).
func keyArg(args []string) (string, error) {
	switch len(args) {
	case 0:
		return "", errors.New("missing KEY (the pattern key, as consolidate prints it)")
	case 1:
		if args[0] == "" {
			return "", errors.New("KEY is empty")
		}
		return args[0], nil
	}
	return "", fmt.Errorf("want one KEY, got %d arguments", len(args))
}

// newGroupCmd is a command that only holds subcommands. A bare call or an
// unknown subcommand is an error rather than help with exit 0, as for cluster.
func newGroupCmd(name, short string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:   name,
		Short: short,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unknown command %q for \"memctl %s\"", args[0], name)
			}
			return fmt.Errorf("missing subcommand (try \"memctl %s --help\")", name)
		},
	}
	cmd.AddCommand(subs...)
	return cmd
}
