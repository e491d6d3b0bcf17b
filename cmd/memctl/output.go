package main

import (
	"encoding/json"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"
)

// printJSON writes v indented, the same shape the server sent.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // memory text is prose; keep "<" and "&" readable
	return enc.Encode(v)
}

// newTable returns a tabwriter laid out like kubectl and etcdctl tables.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// oneLine collapses whitespace (newlines, tabs) so a value cannot break a table
// row, and cuts it to max runes.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}

// fmtTime prints t as RFC 3339, or "-" for the zero time.
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format(time.RFC3339)
}

// orDash keeps empty cells visible in a table.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
