package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runJSON runs memctl -o json against addr and decodes what it printed.
func runJSON(t *testing.T, addr, stdin string, v any, args ...string) {
	t.Helper()
	out, stderr, err := run(t, nil, stdin, append([]string{"--addr", addr, "--timeout", "30s", "-o", "json"}, args...)...)
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, stderr)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("%v printed %q: %v", args, out, err)
	}
}

// decision is the wire shape of one fact decision, read as the contract names it.
type decision struct {
	Decision string `json:"decision"`
	Fact     *struct {
		ID        string `json:"id"`
		Statement string `json:"statement"`
		Status    string `json:"status"`
	} `json:"fact"`
}

// TestModelCommandsAgainstRealNode drives the memory-model commands against one real --dev memnode: a session
// turned into a fact by flush, the fact listed, changed by remember, traced by history, and a signals file
// sent and aggregated. It shares the eval test's node harness; under CI=true it never skips.
func TestModelCommandsAgainstRealNode(t *testing.T) {
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("builds memnode and runs a process")
	}
	addr := startEvalNode(t)
	u := []string{"--user", "e2e-alice"}
	sess := append([]string{"session", "append", "--run", "r1"}, u...)

	out, stderr, err := run(t, nil, "", append([]string{"--addr", addr}, append(sess, "--role", "user", "I live in Berlin and I like jazz.")...)...)
	if err != nil || !strings.HasPrefix(out, "session r1: 1 messages in window, ~") || !strings.HasSuffix(out, " 1 pending\n") {
		t.Fatalf("append: %q %v %s", out, err, stderr)
	}
	var st struct {
		Window  []map[string]any `json:"window"`
		Pending int              `json:"pending"`
	}
	runJSON(t, addr, "Noted: Berlin, jazz.\n", &st, append(sess, "--role", "assistant", "--task-end", "-")...)
	if len(st.Window) != 2 || st.Pending != 2 || st.Window[1]["role"] != "assistant" || st.Window[1]["task_end"] != true {
		t.Fatalf("after second append: %+v", st)
	}

	var flushed struct {
		Episodes []map[string]any `json:"episodes"`
		Facts    []decision       `json:"facts"`
		Trigger  string           `json:"trigger"`
	}
	runJSON(t, addr, "", &flushed, append([]string{"session", "flush", "--run", "r1"}, u...)...)
	added := map[string]string{} // statement -> id
	for _, d := range flushed.Facts {
		if d.Decision == "ADD" && d.Fact != nil {
			added[d.Fact.Statement] = d.Fact.ID
		}
	}
	berlin := added["user lives in Berlin"]
	if flushed.Trigger != "flush" || len(flushed.Episodes) == 0 || berlin == "" {
		t.Fatalf("flush: %+v", flushed)
	}

	var facts struct {
		UserID string `json:"user_id"`
		Facts  []struct {
			ID, Statement, Status string
		} `json:"facts"`
	}
	runJSON(t, addr, "", &facts, append([]string{"facts"}, u...)...)
	if facts.UserID != "e2e-alice" || !hasFact(facts.Facts, berlin, "current") {
		t.Fatalf("facts: %+v", facts)
	}

	// remember supersedes the city; history traces both changes; --all keeps the old fact.
	var remembered struct {
		Facts []decision `json:"facts"`
	}
	runJSON(t, addr, "", &remembered, append([]string{"remember"}, append(u, "I moved to Paris")...)...)
	if len(remembered.Facts) != 1 || remembered.Facts[0].Decision != "UPDATE" {
		t.Fatalf("remember: %+v", remembered)
	}
	runJSON(t, addr, "", &facts, append([]string{"facts", "--all"}, u...)...)
	if !hasFact(facts.Facts, berlin, "superseded") {
		t.Errorf("facts --all: %+v", facts)
	}
	var hist struct {
		UserID string `json:"user_id"`
		Events []struct {
			Op     string `json:"op"`
			Cause  string `json:"cause"`
			Before any    `json:"before"`
			After  any    `json:"after"`
		} `json:"events"`
	}
	runJSON(t, addr, "", &hist, append([]string{"history"}, append(u, berlin)...)...)
	if len(hist.Events) != 2 || hist.Events[0].Op != "ADD" || hist.Events[1].Op != "UPDATE" || hist.Events[1].Before == nil {
		t.Errorf("history of %s: %+v", berlin, hist)
	}
	out, _, err = run(t, nil, "", "--addr", addr, "facts", "--user", "e2e-alice")
	if err != nil || !strings.Contains(out, "user lives in Paris") || strings.Contains(out, "Berlin") {
		t.Errorf("facts table: %q %v", out, err)
	}

	// A samples file of two days; daily aggregates come back per day.
	path := filepath.Join(t.TempDir(), "hr.jsonl")
	data := `{"time":"2026-01-01T08:00:00Z","value":60}` + "\n" + `{"time":"2026-01-01T20:00:00Z","value":70}` + "\n\n" +
		`{"time":"2026-01-02T08:00:00Z","value":65}` + "\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	var sig struct {
		Stored    int   `json:"stored"`
		Anomalies []any `json:"anomalies"`
	}
	runJSON(t, addr, "", &sig, append([]string{"perceive", "--signal", "heart_rate", "--file", path}, u...)...)
	if sig.Stored != 3 || sig.Anomalies == nil {
		t.Errorf("perceive: %+v", sig)
	}
	var daily struct {
		Days []struct {
			Count int     `json:"count"`
			Mean  float64 `json:"mean"`
		} `json:"days"`
	}
	runJSON(t, addr, "", &daily, append([]string{"signals", "daily", "--signal", "heart_rate"}, u...)...)
	if len(daily.Days) != 2 || daily.Days[0].Count != 2 || daily.Days[0].Mean != 65 {
		t.Errorf("daily: %+v", daily)
	}

	var graph struct {
		Edges []struct{ From, To, Predicate string } `json:"edges"`
	}
	runJSON(t, addr, "", &graph, append([]string{"graph", "--concept", "user", "--depth", "1"}, u...)...)
	if len(graph.Edges) == 0 {
		t.Errorf("graph around user: %+v", graph)
	}

	// A server-side refusal comes back as one line naming the field.
	_, _, err = run(t, nil, "", "--addr", addr, "perceive", "--user", "e2e-alice", "--signal", "Bad Name", "--value", "1")
	wantErr(t, err, "signal")
	_, _, err = run(t, nil, "", "--addr", addr, "session", "show", "--user", "e2e-alice", "--run", "nope")
	wantErr(t, err, "session show nope")
}

func hasFact(fs []struct{ ID, Statement, Status string }, id, status string) bool {
	for _, f := range fs {
		if f.ID == id && f.Status == status {
			return true
		}
	}
	return false
}
