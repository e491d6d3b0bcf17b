package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// readJSONs decodes every file matching pattern under dir into a T, skipping those that do not decode.
func readJSONs[T any](pattern string) []T {
	files, _ := filepath.Glob(filepath.Join(*in, pattern))
	var out []T
	for _, fn := range files {
		b, err := os.ReadFile(fn)
		if err != nil {
			continue
		}
		var x T
		if json.Unmarshal(b, &x) == nil {
			out = append(out, x)
		}
	}
	return out
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
// repetitions; a part of make bench that was skipped shows as not measured.
func aims(peers Peers) []aimRow {
	var rows []aimRow
	rows = append(rows, writeAims()...)
	rows = append(rows, searchAims(peers)...)
	rows = append(rows, longMemEvalAim(), tenantAim(), sessionAim(), recoveryAim(), footprintAim())
	return rows
}

func writeAims() []aimRow {
	row := func(c int, target string, ok func(tp, p99 float64) bool) aimRow {
		r := aimRow{aim: fmt.Sprintf("1. replicated puts, %d client%s", c, plural(c)), target: target, verdict: notMeasured}
		m, _ := readWrites(fmt.Sprintf("memcluster-c%d", c))
		e, _ := readWrites(fmt.Sprintf("etcd-c%d", c))
		if len(m) == 0 || len(e) == 0 {
			return r
		}
		mo, _, mp99 := summary(m)
		eo, _, ep99 := summary(e)
		tp, p99 := mo/eo, mp99/ep99
		r.measured = fmt.Sprintf("%.2f× etcd's puts/s (%s against %s), p99 %.2f×", tp, f(mo), f(eo), p99)
		r.verdict = verdict(ok(tp, p99))
		return r
	}
	return []aimRow{
		row(64, "≥ 0.5× etcd's puts/s, p99 ≤ 3× etcd's", func(tp, p99 float64) bool { return tp >= 0.5 && p99 <= 3 }),
		row(1, "≥ 0.7× etcd's puts/s", func(tp, _ float64) bool { return tp >= 0.7 }),
	}
}

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
		shard.measured = fmt.Sprintf("p99 %s ms (p50 %s)", f(p), f(median(m["p50-ms"])))
		shard.verdict = verdict(p < 10)
	}
	rows := []aimRow{shard}
	for _, c := range []struct {
		clients int
		limit   float64
	}{{1, 20}, {8, 60}} {
		r := aimRow{aim: fmt.Sprintf("2. the same through 3 nodes, %d client%s", c.clients, plural(c.clients)),
			target: fmt.Sprintf("p99 < %.0f ms", c.limit), verdict: notMeasured}
		if ws := readJSONs[Write](fmt.Sprintf("search/search-c%d-r*.json", c.clients)); len(ws) > 0 {
			ops, p50, p99 := summary(ws)
			r.measured = fmt.Sprintf("p99 %s ms (p50 %s, %s searches/s)", f(p99), f(p50), f(ops))
			r.verdict = verdict(p99 < c.limit && errorsOf(ws) == 0)
			if n := errorsOf(ws); n > 0 {
				r.measured += fmt.Sprintf(", %d errors", n)
			}
		}
		rows = append(rows, r)
	}
	bm := aimRow{aim: "2. BM25 over 100k documents of one user", target: "p50 ≤ 1.2× plain bleve's", verdict: notMeasured}
	for _, c := range peers.BM25 {
		if c.N == 100000 {
			o, b := p50(c.Engines["ours"]), p50(c.Engines["bleve"])
			bm.measured = fmt.Sprintf("%.2f× (%s against %s ms)", o/b, f(o), f(b))
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
	r := aimRow{aim: "3. LongMemEval (longmemeval-s-dev60), query latency", target: "p50 ≤ 10 ms", verdict: notMeasured}
	var p50s, p99s []float64
	for _, e := range readJSONs[LongMemEval]("longmemeval/longmemeval-*.json") {
		p50s, p99s = append(p50s, e.QueryP50), append(p99s, e.QueryP99)
	}
	if len(p50s) > 0 {
		p := median(p50s)
		r.measured = fmt.Sprintf("p50 %s ms (p99 %s), %d eval%s", f(p), f(median(p99s)), len(p50s), plural(len(p50s)))
		r.verdict = verdict(p <= 10)
	}
	return r
}

func tenantAim() aimRow {
	r := aimRow{aim: "4. a 200-memory user beside 1,000,000 memories of 10,000 others", target: "p50 and p99 ≤ 1.2× alone", verdict: notMeasured}
	m := benchMetrics(filepath.Join(*in, "tenant.txt"), "TenantIndependence")
	if len(m["ratio-p50"]) > 0 && len(m["ratio-p99"]) > 0 {
		a, b := median(m["ratio-p50"]), median(m["ratio-p99"])
		r.measured = fmt.Sprintf("p50 %.2f×, p99 %.2f× (alone p50 %s ms)", a, b, f(median(m["alone-p50-ms"])))
		r.verdict = verdict(a <= 1.2 && b <= 1.2)
	}
	return r
}

func sessionAim() aimRow {
	r := aimRow{aim: "5. consolidation, 16 clients, 3 replicas", target: "≥ 1,000 messages/s, flush p99 < 100 ms", verdict: notMeasured}
	var mps, p99s []float64
	var errs int64
	for _, s := range readJSONs[Session]("session-r*.json") {
		if s.Rate > 0 { // the open-loop runs; the closed loop shows what the cluster could do
			mps, p99s, errs = append(mps, s.MessagesPerS), append(p99s, s.Flush.P99), errs+s.Errors
		}
	}
	if len(mps) == 0 {
		return r
	}
	m, p := median(mps), median(p99s)
	r.measured = fmt.Sprintf("%s messages/s, flush p99 %s ms", f(m), f(p))
	if closed := readJSONs[Session]("session-rclosed.json"); len(closed) > 0 {
		r.measured += fmt.Sprintf(" (closed loop: %s messages/s, p99 %s ms)", f(closed[0].MessagesPerS), f(closed[0].Flush.P99))
	}
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
	if !ok1 || !ok2 {
		return r
	}
	r.measured = fmt.Sprintf("ready %.1f s, catch-up p99 %.2f× (%s memories, one run)", ready, ratio, commas(kv["memories"]))
	r.verdict = verdict(ready < 5 && ratio <= 2)
	return r
}

func footprintAim() aimRow {
	r := aimRow{aim: "7. resident memory at 1,000,000 memories", target: "≤ 2× raw (texts and 256-d vectors)", verdict: notMeasured}
	kvs := keyValues(filepath.Join(*in, "footprint", "footprint.txt"), "footprint:")
	var parts []string
	worst := 0.0
	for _, kv := range kvs {
		x, ok := num(kv, "rss_per_raw")
		if !ok {
			continue
		}
		worst = max(worst, x)
		parts = append(parts, fmt.Sprintf("%s %.2f×", kv["phase"], x))
	}
	if len(parts) == 0 {
		return r
	}
	bpm := kvs[len(kvs)-1]["bytes_per_memory"]
	r.measured = strings.Join(parts, ", ") + fmt.Sprintf(" (%s bytes a memory; %s memories)", commas(bpm), commas(kvs[0]["memories"]))
	// The phases are at rest; the high-water mark of the load says what a node writing without pause nears.
	if hwm, ok := num(kvs[0], "hwm_mib"); ok {
		if raw, ok := num(kvs[0], "raw_mib"); ok && raw > 0 {
			r.measured += fmt.Sprintf("; peak while loading %.2f×", hwm/raw)
		}
	}
	r.verdict = verdict(worst <= 2)
	return r
}

// writeAimsTable writes the aims table: each performance aim, its target, this run's figure and the verdict.
func writeAimsTable(w func(string, ...any), peers Peers) {
	w("### The performance aims against this run\n\n")
	w("Each figure is the median of this run's repetitions (recovery: one run), on this run's machine; the sections\n")
	w("below and bench/out/ hold the details. A part of make bench that was skipped (SKIP_…) shows as not measured.\n")
	w("The plots of aim 8 are `docs/search-latency.png` and `docs/write-scaling.png`.\n\n")
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
