package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
)

// modelTextWidth keeps statement and summary cells within a ~140-column terminal.
const modelTextWidth = 70

func fmtConf(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// printConsolidation writes one line per episode, per fact decision and per
// rejected sentence: what a flush, an end or a remember did. An end says so
// last, since the session is gone even when there was nothing to consolidate.
func printConsolidation(w io.Writer, res apiv1.ConsolidationResult) error {
	if len(res.Episodes) == 0 && len(res.Facts) == 0 && len(res.Rejected) == 0 {
		if _, err := fmt.Fprintf(w, "nothing consolidated (%s)\n", plural(res.Messages, "message")); err != nil {
			return err
		}
		return printEnded(w, res)
	}
	tw := newTable(w)
	for _, ep := range res.Episodes {
		fmt.Fprintf(tw, "episode\t%s\t%s\n", ep.ID, oneLine(ep.Text, modelTextWidth))
	}
	writeDecisions(tw, res.Facts)
	for _, r := range res.Rejected {
		why := r.Reason
		if r.Kept != "" {
			why += ": kept as " + r.Kept + " " + r.KeptID
		}
		fmt.Fprintf(tw, "rejected\t-\t%s\t(%s)\n", oneLine(r.Sentence, modelTextWidth), why)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return printEnded(w, res)
}

func printEnded(w io.Writer, res apiv1.ConsolidationResult) error {
	if !res.Ended {
		return nil
	}
	_, err := fmt.Fprintf(w, "session %s ended\n", res.RunID)
	return err
}

// writeDecisions writes "DECISION  FACT_ID  STATEMENT  (reason)" lines; the
// fact superseded, retracted or confirmed is named when it is another one.
func writeDecisions(w io.Writer, ds []apiv1.FactDecision) {
	for _, d := range ds {
		id, statement := d.Target, ""
		if d.Fact != nil {
			id, statement = d.Fact.ID, d.Fact.Statement
		}
		why := d.Reason
		if d.Target != "" && d.Target != id {
			why += "; target " + d.Target
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t(%s)\n", d.Decision, orDash(id), orDash(oneLine(statement, modelTextWidth)), why)
	}
}

// printSessionLine is the one-line account of a session after an append.
func printSessionLine(w io.Writer, st apiv1.SessionState) error {
	due := ""
	if st.FlushDue {
		due = ", flush due"
	}
	_, err := fmt.Fprintf(w, "session %s: %d messages in window, ~%d tokens, %d pending%s\n",
		st.RunID, len(st.Window), st.Tokens, st.Pending, due)
	return err
}

// printSession writes the session's key/value lines, then its window, one
// message per line, oldest first.
func printSession(w io.Writer, st apiv1.SessionState) error {
	tw := newTable(w)
	row := func(k, v string) { fmt.Fprintf(tw, "%s:\t%s\n", k, v) }
	row("user_id", st.UserID)
	row("run_id", st.RunID)
	row("tokens", "~"+strconv.Itoa(st.Tokens))
	row("pending", strconv.Itoa(st.Pending))
	row("last_active", fmtTime(st.LastActive))
	row("summary", orDash(oneLine(st.Summary, 0)))
	row("window", fmt.Sprintf("%d messages", len(st.Window)))
	if err := tw.Flush(); err != nil {
		return err
	}
	tw = newTable(w)
	for _, m := range st.Window {
		at := "-"
		if m.Time != nil {
			at = fmtTime(*m.Time)
		}
		end := ""
		if m.TaskEnd {
			end = "  [task end]"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s%s\n", at, m.Role, oneLine(m.Text, modelTextWidth), end)
	}
	return tw.Flush()
}

// printFacts writes a table of facts.
func printFacts(w io.Writer, facts []apiv1.Fact) error {
	if len(facts) == 0 {
		_, err := fmt.Fprintln(w, "no facts")
		return err
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tSTATUS\tCONFIDENCE\tSTATEMENT")
	for _, f := range facts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.ID, f.Status, fmtConf(f.Confidence), oneLine(f.Statement, modelTextWidth))
	}
	return tw.Flush()
}

// printHistory writes one row per event, oldest first.
func printHistory(w io.Writer, evs []apiv1.HistoryEvent) error {
	if len(evs) == 0 {
		_, err := fmt.Fprintln(w, "no history")
		return err
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "TIME\tOP\tMEMORY\tTEXT\tCAUSE")
	for _, ev := range evs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", fmtTime(ev.Time), ev.Op, ev.MemoryID,
			orDash(oneLine(eventText(ev), 50)), oneLine(ev.Cause, 50))
	}
	return tw.Flush()
}

// eventText is the statement or text of what an event wrote (or, for a
// removal, of what was there). The client decodes before/after as generic
// JSON, so this looks for the two keys the server uses.
func eventText(ev apiv1.HistoryEvent) string {
	for _, v := range []any{ev.After, ev.Before} {
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		for _, k := range []string{"statement", "text"} {
			if s, ok := m[k].(string); ok && s != "" {
				return s
			}
		}
	}
	return ""
}

// printSignals writes the stored count, then one line per anomaly episode.
func printSignals(w io.Writer, res apiv1.SignalsResponse) error {
	if _, err := fmt.Fprintf(w, "stored %s of %s, %s\n", plural(res.Stored, "sample"), res.Signal,
		plural(len(res.Anomalies), "anomaly episode")); err != nil {
		return err
	}
	return printEpisodes(w, "anomaly", res.Anomalies)
}

func printEpisodes(w io.Writer, kind string, ms []memory.Memory) error {
	tw := newTable(w)
	for _, m := range ms {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", kind, m.ID, fmtTime(m.OccurredAt), oneLine(m.Text, modelTextWidth))
	}
	return tw.Flush()
}

// printAggregates writes one row per day, oldest first.
func printAggregates(w io.Writer, res apiv1.AggregatesResponse) error {
	if len(res.Days) == 0 {
		_, err := fmt.Fprintf(w, "no samples of %s\n", res.Signal)
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	tw := newTable(w)
	fmt.Fprintln(tw, "DAY\tCOUNT\tMIN\tMAX\tMEAN\tP50")
	for _, d := range res.Days {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", d.Day.Format("2006-01-02"), d.Count, f(d.Min), f(d.Max), f(d.Mean), f(d.P50))
	}
	return tw.Flush()
}

// printPatterns writes one line per pattern, then one per fact decision.
// considered is how many episodes were considered; a correction has
// none to name and passes -1.
func printPatterns(w io.Writer, res apiv1.ConsolidateResponse, considered int) error {
	if considered >= 0 {
		if _, err := fmt.Fprintf(w, "considered %s: %s, %s\n", plural(considered, "episode"),
			plural(len(res.Patterns), "pattern"), plural(len(res.Facts), "fact decision")); err != nil {
			return err
		}
	}
	tw := newTable(w)
	for _, p := range res.Patterns {
		fmt.Fprintf(tw, "pattern\t%s\t%s\tsupport %d\tconfidence %s\t%s\n", p.Key, p.Status, p.Support,
			fmtConf(p.Confidence), oneLine(p.Statement, modelTextWidth))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	tw = newTable(w)
	writeDecisions(tw, res.Facts)
	return tw.Flush()
}

// printGraph writes a nodes table (nearest first) and an edges table.
func printGraph(w io.Writer, g apiv1.GraphResponse) error {
	if len(g.Nodes) == 0 {
		_, err := fmt.Fprintln(w, "no nodes")
		return err
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "NODE\tHOPS")
	for _, n := range g.Nodes {
		fmt.Fprintf(tw, "%s\t%d\n", n.ID, n.Hops)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(g.Edges) == 0 {
		_, err := fmt.Fprintln(w, "\nno edges")
		return err
	}
	fmt.Fprintln(w)
	tw = newTable(w)
	fmt.Fprintln(tw, "FROM\tPREDICATE\tTO\tCONFIDENCE\tFACT")
	for _, e := range g.Edges {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.From, e.Predicate, e.To, fmtConf(e.Confidence), e.FactID)
	}
	return tw.Flush()
}

// plural is n and noun, with an "s" unless n is 1 (for summary lines).
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
