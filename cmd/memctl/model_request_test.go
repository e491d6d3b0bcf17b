package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
)

func TestSessionAppendRequest(t *testing.T) {
	o := &appendOptions{}
	_, args := flagsFor(t, o.addFlags, "--user", "alice", "--run", "r1", "--role", "tool", "--agent", "a1",
		"--time", "2025-03-04T05:06:07+01:00", "--task-end", "done:", " ok")
	req, err := o.request(args, strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	if o.user != "alice" || o.run != "r1" || req.AgentID != "a1" || len(req.Messages) != 1 {
		t.Fatalf("got %+v (user %q run %q)", req, o.user, o.run)
	}
	m := req.Messages[0]
	at := time.Date(2025, 3, 4, 4, 6, 7, 0, time.UTC)
	if m.Role != "tool" || m.Text != "done:  ok" || !m.TaskEnd || m.Time == nil || !m.Time.Equal(at) {
		t.Errorf("message %+v", m)
	}

	// Unset optional flags are not sent; "-" reads stdin.
	o = &appendOptions{}
	_, args = flagsFor(t, o.addFlags, "--user", "u", "--run", "r", "--role", "user", "-")
	req, err = o.request(args, strings.NewReader("I live in Berlin\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m := req.Messages[0]; m.Time != nil || m.TaskEnd || req.AgentID != "" || m.Text != "I live in Berlin" {
		t.Errorf("defaults sent or stdin misread: %+v", req)
	}
}

func TestRememberRequest(t *testing.T) {
	o := &rememberOptions{}
	_, args := flagsFor(t, o.addFlags, "--user", "u", "--time", "2025-01-02T03:04:05Z", "my", "name", "is", "Ann")
	text, at, err := o.request(args, strings.NewReader(""))
	if err != nil || text != "my name is Ann" || !at.Equal(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Fatalf("text %q at %v err %v", text, at, err)
	}
	o = &rememberOptions{}
	_, args = flagsFor(t, o.addFlags, "--user", "u", "x")
	if _, at, err = o.request(args, strings.NewReader("")); err != nil || !at.IsZero() {
		t.Errorf("default time %v, %v", at, err)
	}
}

func TestFactsCheck(t *testing.T) {
	o := &factsOptions{}
	flagsFor(t, o.addFlags, "--user", "u", "--as-of", "2025-01-02T03:04:05.5Z")
	asOf, err := o.check()
	if err != nil || !asOf.Equal(time.Date(2025, 1, 2, 3, 4, 5, 5e8, time.UTC)) {
		t.Fatalf("as-of %v, %v", asOf, err)
	}
	o = &factsOptions{}
	flagsFor(t, o.addFlags, "--user", "u", "--all")
	if asOf, err = o.check(); err != nil || !asOf.IsZero() || !o.all {
		t.Errorf("--all: %v %v %+v", asOf, err, o)
	}
}

func TestGraphDefaults(t *testing.T) {
	o := &graphOptions{}
	flagsFor(t, o.addFlags, "--user", "u", "--concept", "Berlin")
	if err := o.check(); err != nil || o.depth != 2 {
		t.Fatalf("depth %d, %v", o.depth, err)
	}
}

func TestPerceiveValueRequest(t *testing.T) {
	o := &perceiveOptions{}
	fs, _ := flagsFor(t, o.addFlags, "--user", "u", "--signal", "heart_rate", "--value", "-7.5e1", "--time", "2025-01-02T03:04:05Z")
	reqs, err := o.requests(fs, strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 1 || reqs[0].Signal != "heart_rate" || len(reqs[0].Samples) != 1 {
		t.Fatalf("got %+v", reqs)
	}
	if s := reqs[0].Samples[0]; s.Value != -75 || s.Time == nil || !s.Time.Equal(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("sample %+v", s)
	}
	// --value 0 is a value, not "unset".
	o = &perceiveOptions{}
	fs, _ = flagsFor(t, o.addFlags, "--user", "u", "--signal", "s", "--value", "0")
	if reqs, err = o.requests(fs, strings.NewReader("")); err != nil || reqs[0].Samples[0].Value != 0 || reqs[0].Samples[0].Time != nil {
		t.Errorf("zero value: %+v %v", reqs, err)
	}
}

func TestPerceiveFileChunks(t *testing.T) {
	// MaxSamples+1 lines, with a blank line and CRLF endings: two requests, order kept.
	var b strings.Builder
	n := apiv1.MaxSamples + 1
	for i := range n {
		if i == 3 {
			b.WriteString("\r\n")
		}
		if i%2 == 0 {
			fmt.Fprintf(&b, `{"time": "2025-01-02T03:04:%02dZ", "value": %d}`+"\r\n", i%60, i)
		} else {
			fmt.Fprintf(&b, `{"value": %d}`+"\n", i)
		}
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, src := range []struct{ file, stdin string }{{path, ""}, {"-", b.String()}} {
		o := &perceiveOptions{}
		fs, _ := flagsFor(t, o.addFlags, "--user", "u", "--signal", "steps", "--file", src.file)
		reqs, err := o.requests(fs, strings.NewReader(src.stdin))
		if err != nil {
			t.Fatal(err)
		}
		if len(reqs) != 2 || len(reqs[0].Samples) != apiv1.MaxSamples || len(reqs[1].Samples) != 1 {
			t.Fatalf("%s: %d requests", src.file, len(reqs))
		}
		if s := reqs[1].Samples[0]; s.Value != float64(n-1) || reqs[1].Signal != "steps" {
			t.Errorf("last sample %+v", s)
		}
		if s := reqs[0].Samples[0]; s.Time == nil || s.Time.Second() != 0 || reqs[0].Samples[1].Time != nil {
			t.Errorf("times: %+v %+v", s, reqs[0].Samples[1])
		}
	}
}

func TestReadSamplesErrors(t *testing.T) {
	good := `{"value": 1}` + "\n"
	for _, tc := range []struct{ name, in, want string }{
		{"not json", good + "72\n", "f line 2: want {"},
		{"text", good + good + "value=3\n", "f line 3: want {"},
		{"no value", `{"time": "2025-01-02T03:04:05Z"}`, `f line 1: no "value"`},
		{"null value", `{"value": null}`, `f line 1: no "value"`},
		{"string value", `{"value": "3"}`, "f line 1: want {"},
		{"huge value", `{"value": 1e400}`, "f line 1: want {"},
		{"misspelt time", `{"timestamp": "2025-01-02T03:04:05Z", "value": 1}`, `f line 1: want {"time": "2025-01-02T15:04:05Z", "value": 72.5}: unknown field "timestamp"`},
		{"bad time", "\n" + `{"time": "2025-01-02", "value": 1}`, `f line 2: time "2025-01-02": want RFC 3339`},
		{"two objects", `{"value": 1} {"value": 2}`, "f line 1: want one JSON object per line"},
		{"empty", "\n \n", "f: no samples"},
		{"long line", good + strings.Repeat(" ", maxSampleLine+1), "f line 2: longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readSamples(strings.NewReader(tc.in), "f")
			wantErr(t, err, tc.want)
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("multi-line error %q", err)
			}
		})
	}
}

func TestParseValue(t *testing.T) {
	for _, v := range []string{"1", "-2.5", "1e3", "0"} {
		if _, err := parseValue(v); err != nil {
			t.Errorf("%q: %v", v, err)
		}
	}
	for v, want := range map[string]string{"abc": "not a number", "": "not a number", "12abc": "not a number",
		" 1": "not a number", "NaN": "must be a finite number", "Inf": "must be a finite number", "1e400": "must be a finite number"} {
		_, err := parseValue(v)
		wantErr(t, err, fmt.Sprintf("--value %q: %s", v, want))
	}
}

func TestOptionalIDAndKeyArgs(t *testing.T) {
	if id, err := optionalIDArg(nil); id != "" || err != nil {
		t.Errorf("no ID: %q %v", id, err)
	}
	if id, err := optionalIDArg([]string{"01J"}); id != "01J" || err != nil {
		t.Errorf("one ID: %q %v", id, err)
	}
	_, err := optionalIDArg([]string{"a", "b"})
	wantErr(t, err, "want at most one ID, got 2")
	_, err = optionalIDArg([]string{""})
	wantErr(t, err, "ID is empty")
	if k, err := keyArg([]string{"a+b"}); k != "a+b" || err != nil {
		t.Errorf("key %q %v", k, err)
	}
}
