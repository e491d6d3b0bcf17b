package main

import (
	"github.com/spf13/cobra"

	"github.com/memcluster/memcluster/internal/buildinfo"
)

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the memctl version, commit and the data formats of this build",
		Long: `Print the memctl version (set at build time, else "dev"), the git commit it was built from, and the
version of every data format this build of memcluster reads and writes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in := buildinfo.Get()
			if g.json() {
				return printJSON(cmd.OutOrStdout(), in)
			}
			return buildinfo.Write(cmd.OutOrStdout(), "memctl", in)
		},
	}
}
