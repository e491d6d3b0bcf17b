package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/memcluster/memcluster/transfer"
)

type importOptions struct {
	file, onError string
	batch         int
}

func newImportCmd(g *globals) *cobra.Command {
	o := &importOptions{}
	cmd := &cobra.Command{
		Use:   "import --file F [--on-error stop|continue]",
		Short: "Import a memctl export: same ids, idempotent, re-embedded by this cluster",
		Long: `Load a file written by memctl export, in batches of one user's lines per request. Memories keep
their ids, times and metadata and are embedded again by this cluster's embedder; facts, history,
patterns, sessions, signals and cold segments are written as they were, and nothing is consolidated
again. What is already stored unchanged is left alone, so a second import reports everything as
unchanged. A line that fails is named by its line number; --on-error stop (the default) stops there
(the lines before it are imported), continue goes on. --file - reads stdin.`,
		Example: `  memctl import --file alice.jsonl
  memctl import --file everyone.jsonl --on-error continue -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd, g)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.file, "file", "", "the export to load (required; - for stdin)")
	f.StringVar(&o.onError, "on-error", transfer.OnErrorStop, "on a failing line: stop or continue")
	f.IntVar(&o.batch, "batch", 200, "lines per request")
	return cmd
}

func (o *importOptions) run(cmd *cobra.Command, g *globals) error {
	if o.file == "" {
		return fmt.Errorf("--file is required")
	}
	if o.onError != transfer.OnErrorStop && o.onError != transfer.OnErrorContinue {
		return fmt.Errorf("--on-error %q: want stop or continue", o.onError)
	}
	c, err := g.client()
	if err != nil {
		return err
	}
	var r io.Reader = cmd.InOrStdin()
	total := int64(-1)
	if o.file != "-" {
		f, err := os.Open(o.file)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil {
			total = st.Size()
		}
		r = f
	}
	report, done := g.progress(cmd.ErrOrStderr(), "import", total)
	sum, err := transfer.Import(cmd.Context(), c, r, transfer.ImportOptions{OnError: o.onError, Batch: o.batch, Progress: report})
	done()
	if sum != nil {
		if perr := g.printSummary(cmd.OutOrStdout(), sum); perr != nil && err == nil {
			err = perr
		}
	}
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if len(sum.Errors) > 0 {
		return fmt.Errorf("import: %d lines failed, the first at line %d", len(sum.Errors), sum.Errors[0].Line)
	}
	return nil
}
