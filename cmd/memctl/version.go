package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version may be set at link time (-ldflags "-X main.version=v1.2.3"); the one
// package variable, as the linker can only set those. Otherwise the version Go
// stamps from VCS at build time is used.
var version = ""

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the memctl version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, commit := buildVersion()
			if g.json() {
				return printJSON(cmd.OutOrStdout(), map[string]string{"version": v, "commit": commit, "go": runtime.Version()})
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "memctl version: %s\ncommit: %s\ngo version: %s\n", v, orDash(commit), runtime.Version())
			return err
		},
	}
}

func buildVersion() (v, commit string) {
	v = version
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return orDash(v), ""
	}
	if v == "" {
		v = bi.Main.Version
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			commit = s.Value
		}
	}
	if v == "" {
		v = "(devel)"
	}
	return v, commit
}
