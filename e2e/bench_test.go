package e2e

import (
	"encoding/json"
	"testing"
	"time"
)

// TestMemctlBenchAgainstRealNode runs the operator's load generator briefly against a real node, so the bench
// commands cannot rot: writes succeed, the search load stores what it says (batched puts), and searches answer.
func TestMemctlBenchAgainstRealNode(t *testing.T) {
	needProcesses(t)
	p := newProc(t, "dev")
	p.start("--dev")
	waitFor(t, 30*time.Second, "a ready node", func() bool {
		_, _, code := memctl(t, p.http, "health")
		return code == 0
	})
	out, errOut, code := memctl(t, p.http, "-o", "json", "bench", "write", "--clients", "4", "--duration", "2s", "--warmup", "0s")
	var w struct {
		Ops, Errors int
		OpsPerS     float64 `json:"ops_per_s"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &w) != nil || w.Ops == 0 || w.Errors != 0 {
		t.Fatalf("bench write: exit %d, %s %s", code, out, errOut)
	}
	out, errOut, code = memctl(t, p.http, "-o", "json", "bench", "search", "--memories", "500", "--users", "2",
		"--clients", "4", "--duration", "2s", "--warmup", "0s")
	var s struct {
		Ops, Errors int
		Load        struct{ Memories int } `json:"load"`
		ResultsMean float64                `json:"results_mean"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &s) != nil || s.Load.Memories != 1000 || s.Ops == 0 || s.Errors != 0 || s.ResultsMean == 0 {
		t.Fatalf("bench search: exit %d, %s %s", code, out, errOut)
	}
	t.Logf("bench write %.0f ops/s; bench search loaded %d, %d searches", w.OpsPerS, s.Load.Memories, s.Ops)
}

// TestMemctlBenchContextAgainstRealNode runs bench context at a tiny scale: the archive is loaded and tiered,
// questions escalate to it and get rehydrated items, and the compactor phase moves what it put.
func TestMemctlBenchContextAgainstRealNode(t *testing.T) {
	needProcesses(t)
	p := newProc(t, "dev")
	p.start("--dev", "--warm-restore-after", "0")
	waitFor(t, 30*time.Second, "a ready node", func() bool {
		_, _, code := memctl(t, p.http, "health")
		return code == 0
	})
	out, errOut, code := memctl(t, p.http, "-o", "json", "bench", "context", "--hot", "300", "--archived", "8000",
		"--compact", "600", "--duration", "1s", "--warmup", "0s", "--clients", "2")
	var r struct {
		Archived       int64 `json:"archived_loaded"`
		ArchiveEntries int   `json:"archive_entries"`
		Phases         []struct {
			Name      string
			Errors    int64
			Escalated struct{ Ops int64 }
			Cold      int64 `json:"escalated_with_cold_items"`
		}
		Compactor struct{ Moved int }
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("bench context: exit %d, %s %s", code, out, errOut)
	}
	if r.Archived != 8000 || r.ArchiveEntries < 16 || len(r.Phases) != 3 || r.Compactor.Moved != 600 {
		t.Fatalf("bench context report: %s", out)
	}
	if m := r.Phases[0]; m.Name != "mixed" || m.Errors != 0 || m.Escalated.Ops == 0 || m.Cold == 0 {
		t.Fatalf("mixed phase: %+v", m)
	}
}
