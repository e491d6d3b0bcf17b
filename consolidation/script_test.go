package consolidation

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Data-driven tests in the style of etcd-io/raft's datadriven scripts (cockroachdb/datadriven
// is not a dependency of this module, so the format is hand-rolled and tiny):
//
//	# comment
//	command arg key=value
//	input lines (optional)
//	----
//	expected output (ends at a blank line)
//
// Run with -rewrite to regenerate the expected output after an intended change, then
// review the diff.
var rewrite = flag.Bool("rewrite", false, "rewrite testdata scripts with the actual output")

type block struct {
	pre    []string // comments and blank lines before the command
	cmd    string
	input  []string
	output []string
	line   int
}

func parseScript(t *testing.T, text string) (blocks []block, tail []string) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	var pre []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			pre = append(pre, l)
			continue
		}
		b := block{pre: pre, cmd: l, line: i + 1}
		pre = nil
		for i++; i < len(lines) && lines[i] != "----"; i++ {
			b.input = append(b.input, lines[i])
		}
		if i == len(lines) {
			t.Fatalf("line %d: %q has no ---- separator", b.line, b.cmd)
		}
		for i++; i < len(lines) && lines[i] != ""; i++ {
			b.output = append(b.output, lines[i])
		}
		blocks = append(blocks, b)
	}
	return blocks, pre
}

func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { runScript(t, f) })
	}
}

func runScript(t *testing.T, path string) {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blocks, tail := parseScript(t, string(raw))
	env := newScriptEnv()
	var out strings.Builder
	for _, b := range blocks {
		got := env.run(t, b)
		for _, l := range b.pre {
			out.WriteString(l + "\n")
		}
		out.WriteString(b.cmd + "\n")
		for _, l := range b.input {
			out.WriteString(l + "\n")
		}
		out.WriteString("----\n")
		if got != "" {
			out.WriteString(got + "\n")
		}
		out.WriteString("\n")
		if want := strings.Join(b.output, "\n"); !*rewrite && got != want {
			t.Errorf("%s:%d: %s\n--- got\n%s\n--- want\n%s", path, b.line, b.cmd, got, want)
		}
	}
	if *rewrite {
		text := strings.TrimRight(out.String(), "\n") + "\n"
		if len(tail) > 0 {
			text += strings.Join(tail, "\n") + "\n"
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// scriptEnv is one user's fact store and clock.
type scriptEnv struct {
	now      time.Time
	facts    []Fact
	next     int
	opts     FactOptions
	episodes []Episode
	pats     []Pattern
}

// eventTime is a command's time= (when it was said), or now.
func (e *scriptEnv) eventTime(t *testing.T, args map[string]string) time.Time {
	if v, ok := args["time"]; ok {
		return e.parseTime(t, v)
	}
	return e.now
}

// patterns runs pattern detection over the episodes so far and decides each promoted pattern's fact.
func (e *scriptEnv) patterns(t *testing.T) string {
	ps, cands, err := DetectPatterns(e.pats, e.episodes, nil, e.now, PatternOptions{})
	if err != nil {
		return "error: " + err.Error()
	}
	e.pats = ps
	var lines []string
	for _, p := range ps {
		lines = append(lines, fmt.Sprintf("pattern %s %s support=%d conf=%v seen=[%s, %s] %q", p.Key, p.Status,
			p.Support, p.Confidence, fmtTime(p.FirstSeen), fmtTime(p.LastSeen), p.Statement))
	}
	if len(cands) > 0 {
		lines = append(lines, e.decideAll(t, cands, nil))
	}
	if len(lines) == 0 {
		return "nothing"
	}
	return strings.Join(lines, "\n")
}

func newScriptEnv() *scriptEnv {
	return &scriptEnv{now: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}
}

// newID pads to two digits so ids sort like ULIDs do (in creation order).
func (e *scriptEnv) newID(time.Time) string { e.next++; return fmt.Sprintf("f%02d", e.next) }

func (e *scriptEnv) run(t *testing.T, b block) string {
	fields := strings.Fields(b.cmd)
	args := map[string]string{}
	for _, f := range fields[1:] {
		k, v, _ := strings.Cut(f, "=")
		args[k] = v
	}
	input := strings.Join(b.input, "\n")
	switch fields[0] {
	case "at":
		e.now = e.parseTime(t, fields[1])
		return "now " + fmtTime(e.now)
	case "reset":
		*e = *newScriptEnv()
		return "ok"
	case "say":
		c, r := Extract(Message{ID: args["src"], Role: RoleUser, Content: input, Time: e.eventTime(t, args)})
		return e.decideAll(t, c, r)
	case "remember":
		c, r, err := Remember(input, args["src"], e.eventTime(t, args))
		if err != nil {
			return "error: " + err.Error()
		}
		return e.decideAll(t, c, r)
	case "cand":
		return e.decideAll(t, []Candidate{e.candidate(t, args)}, nil)
	case "facts":
		if _, all := args["all"]; all {
			return fmtFacts(sortedByID(e.facts))
		}
		return fmtFacts(CurrentFacts(e.facts))
	case "asof":
		return fmtFacts(FactsAsOf(e.facts, e.parseTime(t, fields[1])))
	case "trueat":
		return fmtFacts(TrueAt(e.facts, e.parseTime(t, fields[1])))
	case "history":
		return e.history(fields[1])
	case "graph":
		return e.graph(t, args)
	case "episode":
		at := e.eventTime(t, args)
		e.episodes = append(e.episodes, Episode{ID: args["id"], Start: at, End: at, Summary: input})
		return "ok"
	case "patterns":
		return e.patterns(t)
	}
	t.Fatalf("line %d: unknown command %q", b.line, fields[0])
	return ""
}

func (e *scriptEnv) candidate(t *testing.T, args map[string]string) Candidate {
	c := Candidate{Subject: SubjectUser, Predicate: args["pred"], Object: strings.ReplaceAll(args["obj"], "_", " "),
		Polarity: Positive, Source: args["src"], Time: e.now}
	if s, ok := args["subj"]; ok {
		c.Subject = s
	}
	if _, ok := args["neg"]; ok {
		c.Polarity = Negative
	}
	if _, ok := args["explicit"]; ok {
		c.Explicit = true
	}
	if v, ok := args["time"]; ok {
		c.Time = e.parseTime(t, v)
	}
	return c
}

func (e *scriptEnv) decideAll(t *testing.T, cands []Candidate, rejs []Rejection) string {
	var lines []string
	for _, r := range rejs {
		lines = append(lines, fmt.Sprintf("reject %s: %q", r.Reason, r.Sentence))
	}
	for _, c := range cands {
		d, err := Decide(c, e.facts, e.now, e.newID, e.opts)
		if err != nil {
			lines = append(lines, "error: "+err.Error())
			continue
		}
		e.facts = Apply(e.facts, d)
		lines = append(lines, fmtDecision(d))
	}
	if len(lines) == 0 {
		return "nothing"
	}
	return strings.Join(lines, "\n")
}

func (e *scriptEnv) history(id string) string {
	for _, f := range e.facts {
		if f.ID == id {
			var lines []string
			for _, h := range f.History {
				l := fmt.Sprintf("%s %s conf=%v %s", fmtTime(h.At), h.Op, h.Confidence, h.Reason)
				if h.Related != "" {
					l += " related=" + h.Related
				}
				if h.Source != "" {
					l += " src=" + h.Source
				}
				lines = append(lines, l)
			}
			return strings.Join(lines, "\n")
		}
	}
	return "no fact " + id
}

func (e *scriptEnv) graph(t *testing.T, args map[string]string) string {
	hops, _ := strconv.Atoi(args["hops"])
	nodes, _ := strconv.Atoi(args["nodes"])
	sg, err := BuildGraph(e.facts).Traverse(strings.Split(strings.ReplaceAll(args["seeds"], "_", " "), ","), hops, nodes)
	if err != nil {
		return "error: " + err.Error()
	}
	if len(sg.Nodes) == 0 {
		return "empty"
	}
	var lines []string
	for _, n := range sg.Nodes {
		lines = append(lines, fmt.Sprintf("node %q hops=%d", n.Label, n.Hops))
	}
	for _, ed := range sg.Edges {
		lines = append(lines, fmt.Sprintf("edge %s %s -%s-> %s conf=%v", ed.FactID, ed.From, ed.Predicate, ed.To, ed.Confidence))
	}
	return strings.Join(lines, "\n")
}

// parseTime accepts 2006-01-02T15:04 (UTC), RFC 3339, or an offset from now: +90m, +3d.
func (e *scriptEnv) parseTime(t *testing.T, s string) time.Time {
	if strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-") {
		if strings.HasSuffix(s, "d") {
			n, err := strconv.Atoi(strings.TrimSuffix(s, "d"))
			if err != nil {
				t.Fatalf("bad offset %q", s)
			}
			return e.now.AddDate(0, 0, n)
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("bad offset %q", s)
		}
		return e.now.Add(d)
	}
	for _, layout := range []string{"2006-01-02T15:04", time.RFC3339} {
		if v, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return v
		}
	}
	t.Fatalf("bad time %q", s)
	return time.Time{}
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02T15:04")
}

func fmtDecision(d Decision) string {
	switch d.Op {
	case OpAdd:
		return fmt.Sprintf("ADD %s %q conf=%v — %s", d.New.ID, d.New.Statement, d.New.Confidence, d.Reason)
	case OpUpdate:
		return fmt.Sprintf("UPDATE %s → %s %q conf=%v — %s", d.Target, d.New.ID, d.New.Statement, d.New.Confidence, d.Reason)
	case OpDelete:
		return fmt.Sprintf("DELETE %s — %s", d.Target, d.Reason)
	}
	s := "NONE"
	if d.Target != "" {
		s += " " + d.Target
	}
	if len(d.Changed) > 0 {
		s += fmt.Sprintf(" conf=%v", d.Changed[0].Confidence)
	}
	return s + " — " + d.Reason
}

func fmtFacts(fs []Fact) string {
	if len(fs) == 0 {
		return "none"
	}
	var lines []string
	for _, f := range fs {
		l := fmt.Sprintf("%s %s %s %q conf=%v valid=[%s, %s) recorded=%s", f.ID, f.Subject, f.Predicate, f.Object,
			f.Confidence, fmtTime(f.ValidFrom), fmtTime(f.ValidTo), fmtTime(f.RecordedAt))
		if !f.EndedAt.IsZero() && !f.EndedAt.Equal(f.ValidTo) {
			l += " ended=" + fmtTime(f.EndedAt)
		}
		if f.SupersededBy != "" {
			l += " by=" + f.SupersededBy
		}
		if len(f.Provenance) > 0 {
			l += " src=" + strings.Join(f.Provenance, ",")
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}

func sortedByID(fs []Fact) []Fact { return filterFacts(fs, func(Fact) bool { return true }) }
