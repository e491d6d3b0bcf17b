package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// aimRow is one line of the aims table: the aim, its target, what this run measured and the verdict.
type aimRow struct{ aim, target, measured, verdict string }

// Verdicts.
const (
	met         = "met"
	notMet      = "**not met**"
	notMeasured = "not measured"
)

func verdict(ok bool) string {
	if ok {
		return met
	}
	return notMet
}

// Session is the part of memctl bench session's JSON the aims use.
type Session struct {
	Rate         float64 `json:"rate_per_s"`
	MessagesPerS float64 `json:"messages_per_s"`
	Errors       int64   `json:"errors"`
	Flush        struct {
		P50 float64 `json:"p50"`
		P99 float64 `json:"p99"`
	} `json:"flush_latency_ms"`
}

// LongMemEval is the part of memctl eval longmemeval's JSON the aims use.
type LongMemEval struct {
	QueryP50 float64 `json:"query_p50_ms"`
	QueryP99 float64 `json:"query_p99_ms"`
}

// readJSONs decodes every file matching pattern under the results directory into a T, skipping those that do not
// decode (a run that failed leaves an empty file); files is how many matched.
func readJSONs[T any](pattern string) (out []T, files int) {
	matches, _ := filepath.Glob(filepath.Join(*in, pattern))
	for _, fn := range matches {
		b, err := os.ReadFile(fn)
		if err != nil {
			continue
		}
		var x T
		if json.Unmarshal(b, &x) == nil {
			out = append(out, x)
		}
	}
	return out, len(matches)
}

// benchMetrics collects, over the `go test -bench` lines of path whose name contains name, each custom metric's
// values ("0.087 alone-p50-ms" gives metric alone-p50-ms).
func benchMetrics(path, name string) map[string][]float64 {
	m := map[string][]float64{}
	fh, err := os.Open(path)
	if err != nil {
		return m
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || !strings.Contains(f[0], name) {
			continue
		}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				m[f[i+1]] = append(m[f[i+1]], v)
			}
		}
	}
	return m
}

// keyValues reads the lines of path that start with prefix ("footprint:") as key=value pairs.
func keyValues(path, prefix string) []map[string]string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []map[string]string
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		kv := map[string]string{}
		for _, f := range strings.Fields(strings.TrimPrefix(line, prefix)) {
			if k, v, ok := strings.Cut(f, "="); ok {
				kv[k] = v
			}
		}
		out = append(out, kv)
	}
	return out
}

func num(kv map[string]string, k string) (float64, bool) {
	v, err := strconv.ParseFloat(kv[k], 64)
	return v, err == nil
}

// aims measures this run's figures against the performance aims. Each figure is a median over the run's
// repetitions; a figure older than the run (its part skipped: SKIP_…) says from when, and one measured below the
// aim's scale gets no verdict.
func aims(peers Peers) []aimRow {
	var rows []aimRow
	rows = append(rows, writeAims()...)
	rows = append(rows, searchAims(peers)...)
	rows = append(rows, longMemEvalAim(), tenantAim(), sessionAim(), recoveryAim(), footprintAim())
	return rows
}

// older says when part of make bench was measured, if before this run started (bench/run.sh writes its start to
// "started"); "" when it is this run's or the start is unknown. The part's time is madeAt's: what bench/run.sh
// recorded in made/PART, else the files' times (which a clone of the repository resets).
func older(part string, patterns ...string) string {
	start, ok := unixFile("started")
	if !ok {
		return ""
	}
	t := madeAt(part, patterns...)
	if t.IsZero() || !t.Before(start) {
		return ""
	}
	return fmt.Sprintf(" — from an earlier run (%s)", t.UTC().Format("2006-01-02 15:04 UTC"))
}

// madeAt is when bench/run.sh measured part (made/PART), or for results from before those records the newest of
// the files matching patterns under the results directory; zero when neither is known.
func madeAt(part string, patterns ...string) time.Time {
	if t, ok := unixFile(filepath.Join("made", part)); ok {
		return t
	}
	var t time.Time
	for _, p := range patterns {
		if nt := newest(filepath.Join(*in, p)); nt.After(t) {
			t = nt
		}
	}
	return t
}

// unixFile reads a time that bench/run.sh wrote (Unix seconds) into name, under the results directory.
func unixFile(name string) (time.Time, bool) {
	b, err := os.ReadFile(filepath.Join(*in, name))
	if err != nil {
		return time.Time{}, false
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(sec, 0), true
}

// runsOf says how many runs a figure rests on, and how many of the files there were did not hold a result.
func runsOf(n, files int) string {
	if n == files {
		return fmt.Sprintf("%d run%s", n, plural(n))
	}
	return fmt.Sprintf("%d of %d runs: the others hold no result", n, files)
}

func writeAims() []aimRow {
	row := func(c int, target string, ok func(tp, p99 float64) bool) aimRow {
		r := aimRow{aim: fmt.Sprintf("1. replicated puts, %d client%s", c, plural(c)), target: target, verdict: notMeasured}
		m, mErr := readWrites(fmt.Sprintf("memcluster-c%d", c))
		e, eErr := readWrites(fmt.Sprintf("etcd-c%d", c))
		if len(m) == 0 || len(e) == 0 {
			return r
		}
		mo, _, mp99 := summary(m)
		eo, _, ep99 := summary(e)
		tp, p99 := mo/eo, mp99/ep99
		errs := errorsOf(m)
		r.measured = fmt.Sprintf("%.2f× etcd's puts/s (%s against %s), p99 %.2f×; %d and %d runs, %d errors",
			tp, f(mo), f(eo), p99, len(m), len(e), errs)
		if mErr != nil || eErr != nil {
			r.measured += " (some runs hold no result)"
		}
		r.measured += older("writes", fmt.Sprintf("memcluster-c%d-r*.json", c))
		r.verdict = verdict(ok(tp, p99) && errs == 0)
		return r
	}
	return []aimRow{
		row(64, "≥ 0.5× etcd's puts/s, p99 ≤ 3× etcd's", aim1At64),
		sustainedAim(),
		row(1, "≥ 0.7× etcd's puts/s", func(tp, _ float64) bool { return tp >= 0.7 }),
	}
}

// aim1At64 is aim 1 at 64 clients, for the bursts and the sustained run alike: throughput and p99 as ratios to
// etcd's in the same run.
func aim1At64(tp, p99 float64) bool { return tp >= 0.5 && p99 <= 3 }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func searchAims(peers Peers) []aimRow {
	shard := aimRow{aim: "2. search at 100k memories of one user, shard side (pipeline)", target: "p99 < 10 ms", verdict: notMeasured}
	if m := benchMetrics(filepath.Join(*in, "shardsearch.txt"), "ShardSearch/memories=100k"); len(m["p99-ms"]) > 0 {
		p := median(m["p99-ms"])
		shard.measured = fmt.Sprintf("p99 %s ms (p50 %s), %s", f(p), f(median(m["p50-ms"])), runsOf(len(m["p99-ms"]), len(m["p99-ms"]))) +
			older("gobench", "shardsearch.txt")
		shard.verdict = verdict(p < 10)
	}
	rows := []aimRow{shard}
	for _, c := range []struct {
		clients int
		limit   float64
	}{{1, 20}, {8, 60}} {
		r := aimRow{aim: fmt.Sprintf("2. the same through 3 nodes, %d client%s", c.clients, plural(c.clients)),
			target: fmt.Sprintf("p99 < %.0f ms", c.limit), verdict: notMeasured}
		pattern := fmt.Sprintf("search/search-c%d-r*.json", c.clients)
		if ws, files := readJSONs[Write](pattern); len(ws) > 0 {
			ops, p50, p99 := summary(ws)
			n := errorsOf(ws)
			r.measured = fmt.Sprintf("p99 %s ms (p50 %s, %s searches/s), %s, %d errors", f(p99), f(p50), f(ops),
				runsOf(len(ws), files), n) + older("search", pattern)
			r.verdict = verdict(p99 < c.limit && n == 0)
		}
		rows = append(rows, r)
	}
	bm := aimRow{aim: "2. BM25 over 100k documents of one user", target: "p50 ≤ 1.2× plain bleve's", verdict: notMeasured}
	for _, c := range peers.BM25 {
		if c.N == 100000 {
			o, b := p50(c.Engines["ours"]), p50(c.Engines["bleve"])
			bm.measured = fmt.Sprintf("%.2f× (%s against %s ms)", o/b, f(o), f(b)) + older("peers", "peers.json")
			bm.verdict = verdict(o <= 1.2*b)
		}
	}
	return append(rows, bm)
}

func errorsOf(ws []Write) int64 {
	var n int64
	for _, w := range ws {
		n += w.Errors
	}
	return n
}

func longMemEvalAim() aimRow {
	r := aimRow{aim: "3. LongMemEval (bench/run.sh's LONGMEMEVAL_FILE), query latency", target: "p50 ≤ 10 ms", verdict: notMeasured}
	const pattern = "longmemeval/longmemeval-*.json"
	evals, files := readJSONs[LongMemEval](pattern)
	var p50s, p99s []float64
	for _, e := range evals {
		p50s, p99s = append(p50s, e.QueryP50), append(p99s, e.QueryP99)
	}
	if len(p50s) > 0 {
		p := median(p50s)
		r.measured = fmt.Sprintf("p50 %s ms (p99 %s), %s", f(p), f(median(p99s)), runsOf(len(p50s), files)) + older("longmemeval", pattern)
		r.verdict = verdict(p <= 10)
	}
	return r
}

// aimScale is the number of memories the aims of scale ask for (tenant independence's others, footprint,
// recovery).
const aimScale = 1000000

func tenantAim() aimRow {
	r := aimRow{aim: "4. a 200-memory user beside 1,000,000 memories of 10,000 others", target: "p50 and p99 ≤ 1.2× alone", verdict: notMeasured}
	path := filepath.Join(*in, "tenant.txt")
	m := benchMetrics(path, "TenantIndependence")
	if len(m["ratio-p50"]) == 0 || len(m["ratio-p99"]) == 0 {
		return r
	}
	a, b := median(m["ratio-p50"]), median(m["ratio-p99"])
	others := tenantOthers(path)
	r.measured = fmt.Sprintf("p50 %.2f×, p99 %.2f× (alone p50 %s ms), %s, beside %s memories", a, b,
		f(median(m["alone-p50-ms"])), runsOf(len(m["ratio-p50"]), len(m["ratio-p50"])), commas(strconv.Itoa(others))) + older("gobench", "tenant.txt")
	if others >= aimScale {
		r.verdict = verdict(a <= 1.2 && b <= 1.2)
	}
	return r
}

var othersRe = regexp.MustCompile(`TenantIndependence/others=(\d+)/`)

// tenantOthers is the number of other users' memories the tenant benchmark of path ran beside (0 if unknown).
func tenantOthers(path string) int {
	b, _ := os.ReadFile(path)
	if m := othersRe.FindSubmatch(b); m != nil {
		n, _ := strconv.Atoi(string(m[1]))
		return n
	}
	return 0
}

func sessionAim() aimRow {
	r := aimRow{aim: "5. consolidation, 16 clients, 3 replicas", target: "≥ 1,000 messages/s, flush p99 < 100 ms", verdict: notMeasured}
	const pattern = "session-r*.json"
	var mps, p99s []float64
	var errs int64
	all, files := readJSONs[Session](pattern)
	open := 0
	for _, s := range all {
		if s.Rate > 0 { // the open-loop runs; the closed loop shows what the cluster could do
			mps, p99s, errs = append(mps, s.MessagesPerS), append(p99s, s.Flush.P99), errs+s.Errors
			open++
		}
	}
	if len(mps) == 0 {
		return r
	}
	m, p := median(mps), median(p99s)
	r.measured = fmt.Sprintf("%s messages/s, flush p99 %s ms (worst run %s), %s open loop, %d errors", f(m), f(p),
		f(slices.Max(p99s)), runsOf(open, open+files-len(all)), errs)
	if closed, _ := readJSONs[Session]("session-rclosed.json"); len(closed) > 0 {
		r.measured += fmt.Sprintf("; closed loop %s messages/s, p99 %s ms", f(closed[0].MessagesPerS), f(closed[0].Flush.P99))
	}
	r.measured += older("sessions", pattern)
	r.verdict = verdict(m >= 1000 && p < 100 && errs == 0)
	return r
}

func recoveryAim() aimRow {
	r := aimRow{aim: "6. recovery after SIGKILL at 1,000,000 memories, 16 put clients", target: "/readyz < 5 s, put p99 ≤ 2× while catching up", verdict: notMeasured}
	kvs := keyValues(filepath.Join(*in, "catchup", "catchup.txt"), "catchup:")
	if len(kvs) == 0 {
		return r
	}
	kv := kvs[len(kvs)-1]
	ready, ok1 := num(kv, "ready_s")
	ratio, ok2 := num(kv, "ratio_catchup")
	mem, ok3 := num(kv, "memories")
	if !ok1 || !ok2 || !ok3 {
		return r
	}
	r.measured = fmt.Sprintf("ready %.1f s, catch-up p99 %.2f× (%s memories, one run)", ready, ratio, commas(kv["memories"])) +
		older("catchup", "catchup/catchup.txt")
	if mem >= aimScale {
		r.verdict = verdict(ready < 5 && ratio <= 2)
	}
	return r
}

func footprintAim() aimRow {
	r := aimRow{aim: "7. resident memory at 1,000,000 memories", target: "stated, and ≤ 2× raw (texts and 256-d vectors) at rest: after the load, after a restart",
		verdict: notMeasured}
	kvs := keyValues(filepath.Join(*in, "footprint", "footprint.txt"), "footprint:")
	var parts []string
	var worst map[string]string
	worstX := 0.0
	for _, kv := range kvs {
		x, ok := num(kv, "rss_per_raw")
		if !ok {
			continue
		}
		if x > worstX {
			worst, worstX = kv, x
		}
		parts = append(parts, fmt.Sprintf("%s %.2f×", kv["phase"], x))
	}
	if worst == nil {
		return r
	}
	mem, _ := num(worst, "memories")
	rss, _ := num(worst, "rss_mib")
	r.measured = fmt.Sprintf("%s MiB a million memories at most (%s, %s bytes a memory); ", f(rss*aimScale/mem), worst["phase"],
		commas(worst["bytes_per_memory"])) + strings.Join(parts, ", ") + fmt.Sprintf(" (%s memories, one run)", commas(worst["memories"]))
	// The phases are at rest; the high-water mark of the load says what a node writing without pause nears.
	if hwm, ok := num(kvs[0], "hwm_mib"); ok {
		if raw, ok := num(kvs[0], "raw_mib"); ok && raw > 0 {
			r.measured += fmt.Sprintf("; peak while loading %.2f×", hwm/raw)
		}
	}
	r.measured += older("footprint", "footprint/footprint.txt")
	if mem >= aimScale {
		r.verdict = verdict(worstX <= 2)
	}
	return r
}

// writeAimsTable writes the aims table: each performance aim, its target, this run's figure and the verdict.
func writeAimsTable(w func(string, ...any), peers Peers) {
	w("### The performance aims against this run\n\n")
	w("Each figure is the median of this run's repetitions (footprint and recovery: one run each), on this run's\n")
	w("machine; the sections below and bench/out/ hold the details. A part of make bench that was skipped (SKIP_…)\n")
	w("shows its last figures, marked with when they were made, or none; a figure measured below the aim's scale gets\n")
	w("no verdict. The plots of aim 8 are `docs/search-latency.png` and `docs/write-scaling.png`.\n\n")
	w("| aim | target | this run | verdict |\n| --- | --- | --- | --- |\n")
	for _, r := range aims(peers) {
		m := r.measured
		if m == "" {
			m = "–"
		}
		w("| %s | %s | %s | %s |\n", r.aim, r.target, m, r.verdict)
	}
	w("\n")
}
