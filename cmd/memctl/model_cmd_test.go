package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memcluster/memcluster/apiv1"
)

// TestModelLocalValidation checks that bad input stops before dialling (the
// address is unreachable) with one line naming the problem.
func TestModelLocalValidation(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"value\": 1}\n\n{\"value\": \"x\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := []string{"--addr", unreachable}
	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
		want  string
	}{
		{"session bare", []string{"session"}, "", `missing subcommand (try "memctl session --help")`},
		{"session unknown", []string{"session", "bogus"}, "", `unknown command "bogus" for "memctl session"`},
		{"append no user", []string{"session", "append", "--run", "r", "--role", "user", "x"}, "", "--user is required"},
		{"append no run", []string{"session", "append", "--user", "u", "--role", "user", "x"}, "", "--run is required"},
		{"append no role", []string{"session", "append", "--user", "u", "--run", "r", "x"}, "", "--role is required: user, assistant or tool"},
		{"append bad role", []string{"session", "append", "--user", "u", "--run", "r", "--role", "system", "x"}, "", `--role "system": want user, assistant or tool`},
		{"append no text", []string{"session", "append", "--user", "u", "--run", "r", "--role", "user"}, "", "missing TEXT"},
		{"append empty stdin", []string{"session", "append", "--user", "u", "--run", "r", "--role", "user", "-"}, "\n", "TEXT is empty"},
		{"append bad time", []string{"session", "append", "--user", "u", "--run", "r", "--role", "user", "--time", "now", "x"}, "", `--time "now": want RFC 3339`},
		{"flush no run", []string{"session", "flush", "--user", "u"}, "", "--run is required"},
		{"flush arg", []string{"session", "flush", "--user", "u", "--run", "r", "x"}, "", "unknown command"},
		{"end no user", []string{"session", "end", "--run", "r"}, "", "--user is required"},
		{"show no run", []string{"session", "show", "--user", "u"}, "", "--run is required"},
		{"remember no user", []string{"remember", "x"}, "", "--user is required"},
		{"remember no text", []string{"remember", "--user", "u"}, "", "missing TEXT"},
		{"remember bad time", []string{"remember", "--user", "u", "--time", "2025", "x"}, "", "--time"},
		{"facts no user", []string{"facts"}, "", "--user is required"},
		{"facts bad as-of", []string{"facts", "--user", "u", "--as-of", "yesterday"}, "", `--as-of "yesterday": want RFC 3339`},
		{"facts all and as-of", []string{"facts", "--user", "u", "--all", "--as-of", "2025-01-01T00:00:00Z"}, "", "--all and --as-of do not combine"},
		{"facts arg", []string{"facts", "--user", "u", "x"}, "", "unknown command"},
		{"history no user", []string{"history", "01J"}, "", "--user is required"},
		{"history two ids", []string{"history", "--user", "u", "a", "b"}, "", "want at most one ID"},
		{"perceive no user", []string{"perceive", "--signal", "s", "--value", "1"}, "", "--user is required"},
		{"perceive no signal", []string{"perceive", "--user", "u", "--value", "1"}, "", "--signal is required"},
		{"perceive neither", []string{"perceive", "--user", "u", "--signal", "s"}, "", "give --value (one sample) or --file"},
		{"perceive both", []string{"perceive", "--user", "u", "--signal", "s", "--value", "1", "--file", "-"}, "", "--value and --file do not combine"},
		{"perceive nan", []string{"perceive", "--user", "u", "--signal", "s", "--value", "abc"}, "", `--value "abc": not a number`},
		{"perceive empty value", []string{"perceive", "--user", "u", "--signal", "s", "--value", ""}, "", `--value "": not a number`},
		{"perceive inf", []string{"perceive", "--user", "u", "--signal", "s", "--value", "+Inf"}, "", "must be a finite number"},
		{"perceive bad time", []string{"perceive", "--user", "u", "--signal", "s", "--value", "1", "--time", "x"}, "", `--time "x"`},
		{"perceive file and time", []string{"perceive", "--user", "u", "--signal", "s", "--file", "-", "--time", "2025-01-01T00:00:00Z"}, "", "--time goes with --value"},
		{"perceive bad line", []string{"perceive", "--user", "u", "--signal", "s", "--file", bad}, "", bad + " line 3: want {"},
		{"perceive bad stdin", []string{"perceive", "--user", "u", "--signal", "s", "--file", "-"}, "{\"valu\": 2}\n", "stdin line 1:"},
		{"perceive missing file", []string{"perceive", "--user", "u", "--signal", "s", "--file", "/nonexistent/x.jsonl"}, "", "--file: open /nonexistent/x.jsonl"},
		{"perceive empty file flag", []string{"perceive", "--user", "u", "--signal", "s", "--file", ""}, "", "--file is empty"},
		{"signals bare", []string{"signals"}, "", "missing subcommand"},
		{"daily no signal", []string{"signals", "daily", "--user", "u"}, "", "--signal is required"},
		{"daily no user", []string{"signals", "daily", "--signal", "s"}, "", "--user is required"},
		{"consolidate no user", []string{"consolidate"}, "", "--user is required"},
		{"patterns bare", []string{"patterns"}, "", "missing subcommand"},
		{"correct no key", []string{"patterns", "correct", "--user", "u"}, "", "missing KEY"},
		{"correct two keys", []string{"patterns", "correct", "--user", "u", "a", "b"}, "", "want one KEY"},
		{"correct no user", []string{"patterns", "correct", "k"}, "", "--user is required"},
		{"graph no concept", []string{"graph", "--user", "u"}, "", "--concept is required"},
		{"graph negative depth", []string{"graph", "--user", "u", "--concept", "c", "--depth", "-1"}, "", "--depth -1: must not be negative"},
		{"graph bad depth", []string{"graph", "--user", "u", "--concept", "c", "--depth", "two"}, "", "invalid argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, err := run(t, nil, tc.stdin, append(a, tc.args...)...)
			wantErr(t, err, tc.want)
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("multi-line error %q", err)
			}
			if out != "" || stderr != "" {
				t.Errorf("stdout %q, stderr %q", out, stderr)
			}
		})
	}
}

// TestModelValidInputDials checks the other side: input that passes local
// checks reaches the network (and fails there, at the unreachable address).
func TestModelValidInputDials(t *testing.T) {
	for _, args := range [][]string{
		{"session", "append", "--user", "u", "--run", "r", "--role", "assistant", "hi"},
		{"session", "flush", "--user", "u", "--run", "r"},
		{"session", "end", "--user", "u", "--run", "r"},
		{"session", "show", "--user", "u", "--run", "r"},
		{"remember", "--user", "u", "x"},
		{"facts", "--user", "u", "--all"},
		{"history", "--user", "u"},
		{"perceive", "--user", "u", "--signal", "s", "--value", "1"},
		{"signals", "daily", "--user", "u", "--signal", "s"},
		{"consolidate", "--user", "u"},
		{"patterns", "correct", "--user", "u", "k"},
		{"graph", "--user", "u", "--concept", "c"},
	} {
		_, _, err := run(t, nil, "", append([]string{"--addr", unreachable, "--timeout", "2s"}, args...)...)
		wantErr(t, err, "127.0.0.1:1")
	}
}

// TestModelHelp is the contract's sanity check: each command exists under its
// name and documents its flags.
func TestModelHelp(t *testing.T) {
	for _, tc := range []struct {
		cmd  []string
		want []string
	}{
		{[]string{"session", "append"}, []string{"--user", "--run", "--role", "user|assistant|tool", "--time", "--agent", "--task-end", `"-"`}},
		{[]string{"session", "flush"}, []string{"--user", "--run", "ADD, UPDATE, DELETE or NONE"}},
		{[]string{"session", "end"}, []string{"--user", "--run"}},
		{[]string{"session", "show"}, []string{"--user", "--run"}},
		{[]string{"remember"}, []string{"--user", "--time", "TEXT"}},
		{[]string{"facts"}, []string{"--user", "--all", "--as-of"}},
		{[]string{"history"}, []string{"--user", "[ID]"}},
		{[]string{"perceive"}, []string{"--user", "--signal", "--value", "--time", "--file", "JSON Lines",
			strconv.Itoa(apiv1.MaxSamples) + " samples", "several", "requests"}},
		{[]string{"signals", "daily"}, []string{"--user", "--signal"}},
		{[]string{"consolidate"}, []string{"--user"}},
		{[]string{"patterns", "correct"}, []string{"--user", "KEY"}},
		{[]string{"graph"}, []string{"--user", "--concept", "--depth", "(default 2)"}},
	} {
		out, _, err := run(t, nil, "", append(tc.cmd, "--help")...)
		if err != nil {
			t.Fatalf("%v --help: %v", tc.cmd, err)
		}
		if !strings.Contains(out, "memctl "+strings.Join(tc.cmd, " ")) {
			t.Errorf("%v: usage line missing:\n%s", tc.cmd, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v --help lacks %q:\n%s", tc.cmd, w, out)
			}
		}
	}
	out, _, err := run(t, nil, "", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"session", "remember", "facts", "history", "perceive", "signals", "consolidate", "patterns", "graph"} {
		if !strings.Contains(out, "\n  "+c+" ") {
			t.Errorf("root help lacks %q", c)
		}
	}
}
