package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/memcluster/memcluster/transfer"
)

// progress reports an export's or an import's progress on w (stderr): a bar on a terminal (of total bytes,
// or a running count of lines when total is -1), JSON lines with -o json, nothing otherwise. done ends the
// bar's line.
func (g *globals) progress(w io.Writer, what string, total int64) (report func(transfer.Progress), done func()) {
	if g.json() {
		enc := json.NewEncoder(w)
		return func(p transfer.Progress) {
			_ = enc.Encode(struct {
				What string `json:"progress"`
				transfer.Progress
			}{what, p})
		}, func() {}
	}
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return func(transfer.Progress) {}, func() {}
	}
	opts := []progressbar.Option{progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(), progressbar.OptionThrottle(100_000_000)}
	if total > 0 {
		opts = append(opts, progressbar.OptionShowBytes(true))
	}
	bar := progressbar.NewOptions64(total, opts...)
	return func(p transfer.Progress) {
			if total > 0 {
				_ = bar.Set64(p.Bytes)
			} else {
				_ = bar.Set(p.Lines)
			}
		}, func() {
			_ = bar.Finish()
			fmt.Fprintln(w)
		}
}

// printSummary prints what an export or an import did: JSON with -o json, else a table of counts by kind.
func (g *globals) printSummary(w io.Writer, s *transfer.Summary) error {
	if g.json() {
		return printJSON(w, s)
	}
	fmt.Fprintf(w, "%-10s %9s %9s %9s %9s %9s\n", "KIND", "EXPORTED", "CREATED", "UPDATED", "UNCHANGED", "FAILED")
	for _, k := range s.KindNames() {
		c := s.Kinds[k]
		fmt.Fprintf(w, "%-10s %9d %9d %9d %9d %9d\n", k, c.Exported, c.Created, c.Updated, c.Unchanged, c.Failed)
	}
	for _, e := range s.Errors {
		fmt.Fprintf(w, "line %d: %s\n", e.Line, e.Err)
	}
	_, err := fmt.Fprintf(w, "%d users, %d lines in %.2fs\n", s.Users, s.Lines, s.Seconds)
	return err
}
