package main

import (
	"fmt"
	"path/filepath"
)

// The sustained run: make bench's one SUSTAIN_DUR run at 64 clients a side, after the bursts and the sessions on
// the same clusters. memnode's replicas defer their full-text batches under a saturated write path, so a burst
// does not pay for its indexing; this run does, and sustained.txt says how long each side stayed busy after it.

// sustainedRun is bench/run.sh's line of sustained.txt: duration, and for each side NAME_busy_after_s (seconds)
// and NAME_still_busy=1 when settle gave up waiting.
func sustainedRun() map[string]string {
	if l := keyValues(filepath.Join(*in, "sustained.txt"), "sustained:"); len(l) > 0 {
		return l[len(l)-1]
	}
	return map[string]string{}
}

// sustainedFigures reads the run's two sides; ok is false unless memcluster's holds a result.
func sustainedFigures() (m, e Write, haveEtcd, ok bool) {
	ms, _ := readJSONs[Write]("memcluster-sustained-c64.json")
	es, _ := readJSONs[Write]("etcd-sustained-c64.json")
	if len(ms) == 0 || ms[0].OpsPerS == 0 {
		return m, e, false, false
	}
	haveEtcd = len(es) > 0 && es[0].OpsPerS > 0 && es[0].LatencyMs.P99 > 0
	if haveEtcd {
		e = es[0]
	}
	return ms[0], e, haveEtcd, true
}

func sustainedLabel() string {
	if d := sustainedRun()["duration"]; d != "" {
		return "sustained (" + d + ")"
	}
	return "sustained"
}

// sustainedBusy says how long each side stayed busy after its run, as far as sustained.txt knows.
func sustainedBusy() string {
	kv := sustainedRun()
	side := func(name, label string) string {
		b := kv[name+"_busy_after_s"]
		switch {
		case b == "":
			return ""
		case kv[name+"_still_busy"] == "1":
			return fmt.Sprintf("%s still busy %s s after the run", label, b)
		default:
			return fmt.Sprintf("%s busy %s s after the run", label, b)
		}
	}
	out := side("memcluster", "memnode")
	if e := side("etcd", "etcd"); e != "" {
		out += ", " + e
	}
	return out
}

// sustainedRow is the run's line of the write table (c); ok is false when it did not run.
func sustainedRow() (string, bool) {
	m, e, haveEtcd, ok := sustainedFigures()
	if !ok {
		return "", false
	}
	etcd, tp, p99 := "– | – | –", "–", "–"
	if haveEtcd {
		etcd = fmt.Sprintf("%s | %s | %s", f(e.OpsPerS), f(e.LatencyMs.P50), f(e.LatencyMs.P99))
		tp, p99 = ratio(m.OpsPerS, e.OpsPerS), ratio(m.LatencyMs.P99, e.LatencyMs.P99)
	}
	runs := fmt.Sprintf("one run a side, %d and %d errors", m.Errors, e.Errors)
	if b := sustainedBusy(); b != "" {
		runs += "; " + b
	}
	return fmt.Sprintf("| 64, %s | %s | %s | %s | %s | %s | %s | %s%s |", sustainedLabel(), f(m.OpsPerS), f(m.LatencyMs.P50),
		f(m.LatencyMs.P99), etcd, tp, p99, runs, older("sustained", "memcluster-sustained-c64.json")), true
}

// sustainedAim is aim 1 at 64 clients over the sustained run.
func sustainedAim() aimRow {
	r := aimRow{aim: "1. replicated puts, 64 clients, " + sustainedLabel(), target: "as above", verdict: notMeasured}
	m, e, haveEtcd, ok := sustainedFigures()
	if !ok || !haveEtcd {
		return r
	}
	tp, p99 := m.OpsPerS/e.OpsPerS, m.LatencyMs.P99/e.LatencyMs.P99
	r.measured = fmt.Sprintf("%.2f× etcd's puts/s (%s against %s), p99 %.2f×; one run a side, %d and %d errors",
		tp, f(m.OpsPerS), f(e.OpsPerS), p99, m.Errors, e.Errors)
	if b := sustainedBusy(); b != "" {
		r.measured += "; " + b
	}
	r.measured += older("sustained", "memcluster-sustained-c64.json")
	r.verdict = verdict(aim1At64(tp, p99) && m.Errors == 0)
	return r
}
