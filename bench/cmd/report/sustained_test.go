package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// resultsDir points the report at a fresh results directory holding files (name -> content).
func resultsDir(t *testing.T, files map[string]string) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := *in
	*in = dir
	t.Cleanup(func() { *in = old })
}

const (
	sustainedM = `{"ops_per_s": 1220.4, "errors": 0, "latency_ms": {"p50": 35.4, "p99": 264.2}}`
	sustainedE = `{"ops_per_s": 3403.9, "errors": 0, "latency_ms": {"p50": 13.0, "p99": 93.4}}`
)

func TestSustainedAimAndRow(t *testing.T) {
	resultsDir(t, map[string]string{
		"memcluster-sustained-c64.json": sustainedM,
		"etcd-sustained-c64.json":       sustainedE,
		"sustained.txt":                 "sustained: clients=64 duration=120s memcluster_busy_after_s=598 memcluster_still_busy=1 etcd_busy_after_s=0\n",
	})
	a := sustainedAim()
	if a.verdict != notMet || !strings.Contains(a.aim, "sustained (120s)") || !strings.Contains(a.measured, "0.36×") {
		t.Errorf("aim = %+v", a)
	}
	if !strings.Contains(a.measured, "memnode still busy 598 s after the run, etcd busy 0 s after the run") {
		t.Errorf("aim's busy times: %q", a.measured)
	}
	row, ok := sustainedRow()
	if !ok || !strings.HasPrefix(row, "| 64, sustained (120s) | 1,220 |") || strings.Contains(row, "earlier run") {
		t.Errorf("row = %q, %v", row, ok)
	}
}

// Without etcd's side the row still shows memcluster's figures, and the aim has no verdict.
func TestSustainedWithoutEtcd(t *testing.T) {
	resultsDir(t, map[string]string{"memcluster-sustained-c64.json": sustainedM})
	if a := sustainedAim(); a.verdict != notMeasured || a.measured != "" {
		t.Errorf("aim = %+v", a)
	}
	row, ok := sustainedRow()
	if !ok || !strings.Contains(row, "| – | – | – | – | – |") {
		t.Errorf("row = %q, %v", row, ok)
	}
	resultsDir(t, nil)
	if _, ok := sustainedRow(); ok {
		t.Error("a row without a run")
	}
}

// A part is dated from made/PART, not from its files' times (a clone resets them).
func TestOlderReadsMadeStamps(t *testing.T) {
	start := time.Date(2026, 11, 30, 16, 54, 0, 0, time.UTC)
	earlier := time.Date(2026, 11, 30, 13, 7, 0, 0, time.UTC)
	unix := func(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }
	resultsDir(t, map[string]string{
		"started":          unix(start),
		"made/gobench":     unix(earlier),
		"made/writes":      unix(start),
		"shardsearch.txt":  "",
		"tenant.txt":       "",
		"footprint/fp.txt": "", // no stamp, file just written: this run's
	})
	if got := older("gobench", "shardsearch.txt"); got != " — from an earlier run (2026-11-30 13:07 UTC)" {
		t.Errorf("gobench: %q", got)
	}
	if got := older("writes", "memcluster-c64-r*.json"); got != "" {
		t.Errorf("writes, made by this run: %q", got)
	}
	if got := older("footprint", "footprint/fp.txt"); got != "" {
		t.Errorf("footprint, no stamp and a fresh file: %q", got)
	}
}
