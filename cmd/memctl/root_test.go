package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// unreachable is an address nothing listens on: a test that fails to stop at
// local validation gets a connection error instead of the expected message.
const unreachable = "http://127.0.0.1:1"

// run executes memctl in-process with the given environment and stdin.
func run(t *testing.T, env map[string]string, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := newRootCmd(strings.NewReader(stdin), &out, &errb, func(k string) string { return env[k] })
	cmd.SetArgs(args)
	err = cmd.Execute()
	return out.String(), errb.String(), err
}

func wantErr(t *testing.T, err error, substr string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", substr)
	}
	if !strings.Contains(err.Error(), substr) {
		t.Fatalf("error %q does not contain %q", err, substr)
	}
}

func TestOutputFlag(t *testing.T) {
	_, _, err := run(t, nil, "", "-o", "yaml", "version")
	wantErr(t, err, `unknown output format "yaml"`)

	_, _, err = run(t, map[string]string{"MEMCTL_OUTPUT": "xml"}, "", "version")
	wantErr(t, err, `unknown output format "xml"`)

	// env selects json; the flag wins over env.
	out, _, err := run(t, map[string]string{"MEMCTL_OUTPUT": "json"}, "", "version")
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil || v["version"] == "" || v["go"] == "" {
		t.Fatalf("version json %q: %v", out, err)
	}
	out, _, err = run(t, map[string]string{"MEMCTL_OUTPUT": "json"}, "", "-o", "table", "version")
	if err != nil || !strings.HasPrefix(out, "memctl version: ") {
		t.Fatalf("out %q, err %v", out, err)
	}
}

func TestTimeoutFlag(t *testing.T) {
	_, _, err := run(t, map[string]string{"MEMCTL_TIMEOUT": "soon"}, "", "version")
	wantErr(t, err, "MEMCTL_TIMEOUT")
	_, _, err = run(t, nil, "", "--timeout", "-1s", "version")
	wantErr(t, err, "negative")
	_, _, err = run(t, nil, "", "--timeout", "x", "version")
	wantErr(t, err, "invalid argument")
	// A good flag value is not overridden by a bad env one.
	if _, _, err := run(t, map[string]string{"MEMCTL_TIMEOUT": "soon"}, "", "--timeout", "1s", "version"); err != nil {
		t.Fatal(err)
	}
}

func TestAddrFlagAndEnv(t *testing.T) {
	_, _, err := run(t, map[string]string{"MEMCTL_ADDR": unreachable}, "", "health")
	wantErr(t, err, "127.0.0.1:1")
	_, _, err = run(t, map[string]string{"MEMCTL_ADDR": "http://127.0.0.1:9"}, "", "--addr", unreachable, "health")
	wantErr(t, err, "127.0.0.1:1/healthz")
	_, _, err = run(t, nil, "", "--addr", "ftp://x", "health")
	wantErr(t, err, "scheme must be http or https")
	_, _, err = run(t, nil, "", "--addr", "", "health")
	wantErr(t, err, "--addr is empty")
}

func TestLocalValidation(t *testing.T) {
	a := []string{"--addr", unreachable}
	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
		want  string
	}{
		{"put no user", []string{"put", "hello"}, "", "--user is required"},
		{"put no text", []string{"put", "--user", "u"}, "", "missing TEXT"},
		{"put blank text", []string{"put", "--user", "u", " ", ""}, "", "TEXT is empty"},
		{"put empty stdin", []string{"put", "--user", "u", "-"}, "\n", "TEXT is empty"},
		{"put bad time", []string{"put", "--user", "u", "--time", "yesterday", "x"}, "", `--time "yesterday": want RFC 3339`},
		{"put bad type", []string{"put", "--user", "u", "--type", "dream", "x"}, "", "unknown type"},
		{"put bad importance", []string{"put", "--user", "u", "--importance", "2", "x"}, "", "between 0 and 1"},
		{"put bad meta", []string{"put", "--user", "u", "--meta", "novalue", "x"}, "", "want key=value"},
		{"put dup meta", []string{"put", "--user", "u", "--meta", "k=1", "--meta", "k=2", "x"}, "", "given twice"},
		{"get no user", []string{"get", "01J"}, "", "--user is required"},
		{"get no id", []string{"get", "--user", "u"}, "", "missing ID"},
		{"get two ids", []string{"get", "--user", "u", "a", "b"}, "", "want one ID"},
		{"delete no user", []string{"delete", "01J"}, "", "--user is required"},
		{"delete no id", []string{"delete", "--user", "u"}, "", "missing ID"},
		{"search no user", []string{"search", "q"}, "", "--user is required"},
		{"search no query", []string{"search", "--user", "u"}, "", "missing QUERY"},
		{"search user and all", []string{"search", "--user", "u", "--all-users", "q"}, "", "exclude each other"},
		{"search shard timeout one user", []string{"search", "--user", "u", "--shard-timeout", "1s", "q"}, "", "across users only"},
		{"search negative shard timeout", []string{"search", "--agent", "a", "--shard-timeout", "-1s", "q"}, "", "must be positive"},
		{"search bad since", []string{"search", "--user", "u", "--since", "2025-01-01", "q"}, "", "--since"},
		{"search bad until", []string{"search", "--user", "u", "--until", "now", "q"}, "", "--until"},
		{"search bad now", []string{"search", "--user", "u", "--now", "yesterday", "q"}, "", "--now"},
		{"search until before since", []string{"search", "--user", "u", "--since", "2025-02-01T00:00:00Z", "--until", "2025-01-01T00:00:00Z", "q"}, "", "not after"},
		{"search k zero", []string{"search", "--user", "u", "--k", "0", "q"}, "", "--k 0"},
		{"search bad type", []string{"search", "--user", "u", "--type", "", "q"}, "", "--type"},
		{"search bad half-life", []string{"search", "--user", "u", "--recency-half-life", "a month", "q"}, "", "--recency-half-life"},
		{"search negative half-life", []string{"search", "--user", "u", "--recency-half-life", "-1h", "q"}, "", "positive"},
		{"cluster bare", []string{"cluster"}, "", "missing subcommand"},
		{"cluster status arg", []string{"cluster", "status", "x"}, "", "unknown command"},
		{"unknown flag", []string{"put", "--bogus"}, "", "unknown flag: --bogus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, err := run(t, nil, tc.stdin, append(a, tc.args...)...)
			wantErr(t, err, tc.want)
			// SilenceUsage/SilenceErrors: main prints the one error line, cobra nothing.
			if out != "" || stderr != "" {
				t.Errorf("stdout %q, stderr %q", out, stderr)
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	if c := exitCode(errors.New("x")); c != 1 {
		t.Errorf("plain error: %d", c)
	}
	err := &exitError{code: exitUnhealthy, err: errors.New("cluster is unhealthy")}
	if c := exitCode(err); c != 2 {
		t.Errorf("exitError: %d", c)
	}
	if c := exitCode(errors.Join(errors.New("ctx"), err)); c != 2 {
		t.Errorf("wrapped exitError: %d", c)
	}
}

func TestClusterStatusHasCheckFlag(t *testing.T) {
	out, _, err := run(t, nil, "", "cluster", "status", "--help")
	if err != nil || !strings.Contains(out, "--check") || !strings.Contains(out, "exit 2") {
		t.Fatalf("help %q, err %v", out, err)
	}
}
