package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/memcluster/memcluster/client"
)

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %v, want %v ± %v", name, got, want, tol)
	}
}

func TestLatencyPercentiles(t *testing.T) {
	r := newBenchRecorder()
	// 1..10000 µs once each: p50 5 ms, p90 9 ms, p99 9.9 ms, p99.9 9.99 ms.
	for us := 1; us <= 10000; us++ {
		r.record(time.Duration(us)*time.Microsecond, -1, nil)
	}
	l := latencyOf(r.hist)
	// 3 significant digits: values are exact to 0.1%.
	near(t, "p50", l.P50, 5, 0.005)
	near(t, "p90", l.P90, 9, 0.009)
	near(t, "p99", l.P99, 9.9, 0.01)
	near(t, "p999", l.P999, 9.99, 0.01)
	near(t, "max", l.Max, 10, 0.01)
	near(t, "min", l.Min, 0.001, 0)
	near(t, "mean", l.Mean, 5.0005, 0.005)
	if !(l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max) {
		t.Errorf("not monotonic: %+v", l)
	}

	// A tail the percentiles must find: 990 fast requests, 10 slow ones.
	r = newBenchRecorder()
	for range 990 {
		r.record(2*time.Millisecond, -1, nil)
	}
	for range 10 {
		r.record(800*time.Millisecond, -1, nil)
	}
	l = latencyOf(r.hist)
	near(t, "p50", l.P50, 2, 0.002)
	near(t, "p99", l.P99, 2, 0.002)
	near(t, "p999", l.P999, 800, 0.8)
	near(t, "max", l.Max, 800, 0.8)

	// Empty: all zero, no panic.
	if l := latencyOf(newBenchRecorder().hist); l != (benchLatency{}) {
		t.Errorf("empty: %+v", l)
	}

	// Out of range values are clamped, not dropped.
	r = newBenchRecorder()
	r.record(0, -1, nil)
	r.record(time.Hour, -1, nil)
	if r.hist.TotalCount() != 2 || r.ops != 2 {
		t.Fatalf("clamped values lost: %d", r.hist.TotalCount())
	}
	near(t, "max clamped", latencyOf(r.hist).Max, 600000, 600)
}

func TestRecorderErrorsAndMerge(t *testing.T) {
	a, b := newBenchRecorder(), newBenchRecorder()
	unavailable := &client.APIError{Status: 503, Code: "unavailable", Message: "no leader for shard 3"}
	a.record(time.Millisecond, 3, nil)
	a.record(time.Millisecond, -1, unavailable)
	a.record(time.Millisecond, -1, fmt.Errorf("put: %w", context.DeadlineExceeded))
	b.record(time.Millisecond, 0, nil)
	b.record(time.Millisecond, -1, &client.APIError{Status: 503, Code: "unavailable", Message: "second"})
	a.merge(b)
	if a.ops != 2 || a.errors() != 3 || a.hist.TotalCount() != 2 {
		t.Fatalf("ops %d errors %d hist %d", a.ops, a.errors(), a.hist.TotalCount())
	}
	if a.errs["unavailable"] != 2 || a.errs["timeout"] != 1 {
		t.Errorf("by code %v", a.errs)
	}
	if a.sample["unavailable"] != unavailable.Error() {
		t.Errorf("sample %q", a.sample["unavailable"])
	}
	if a.results != 3 || a.empty != 1 {
		t.Errorf("results %d empty %d", a.results, a.empty)
	}
}

func TestBenchErrorCode(t *testing.T) {
	refused := &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&client.APIError{Status: 503, Code: "unavailable"}, "unavailable"},
		{fmt.Errorf("put: %w", &client.APIError{Status: 502, Message: "<html>bad gateway"}), "http_502"},
		{fmt.Errorf("x: no answer within 1s: %w", context.DeadlineExceeded), "timeout"},
		{refused, "conn_refused"},
		{&url.Error{Op: "Post", URL: "http://x", Err: errors.New("unexpected EOF")}, "transport"},
		{&url.Error{Op: "Post", URL: "http://x", Err: fmt.Errorf("read: %w", syscall.ECONNRESET)}, "conn_reset"},
		{errors.New("something else"), "transport"},
	} {
		if got := benchErrorCode(tc.err); got != tc.want {
			t.Errorf("benchErrorCode(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func testReport() benchReport {
	return benchReport{
		Op: "write", Addrs: []string{"http://n1:7480"}, Clients: 16, WarmupS: 1, TargetS: 10, TimeoutS: 10,
		RunID: "abc123", SizeBytes: 200, Users: 1000, UserPrefix: "bench-write-abc123-",
		DurationS: 10.012, Ops: 12345, Errors: 3, ErrorsByCode: map[string]int64{"timeout": 1, "unavailable": 2},
		ErrorSamples: map[string]string{"unavailable": "503 unavailable: no leader\nfor shard 3"},
		OpsPerS:      1233.0, LatencyMs: benchLatency{Min: 0.5, Mean: 12.5, P50: 10.25, P90: 20.5, P99: 40.125, P999: 80, Max: 120.75},
		Connections: 16,
	}
}

func TestPrintBenchReport(t *testing.T) {
	var b bytes.Buffer
	if err := printBenchReport(&b, testReport()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"op           write\n",
		"users        1000 (bench-write-abc123-0 .. bench-write-abc123-999)\n",
		"duration     10.012s (target 10s)\n",
		"ops          12345\n",
		"errors       3 (unavailable 2, timeout 1)\n",
		"throughput   1233.0 ops/s\n",
		"LATENCY_MS  P50     P90     P99     P99.9   MAX      MEAN\n",
		"all         10.250  20.500  40.125  80.000  120.750  12.500\n",
		"first unavailable error: 503 unavailable: no leader for shard 3\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "ADDR") || strings.Contains(out, "results") {
		t.Errorf("per-address or search lines in a one-address write report:\n%s", out)
	}

	// Several addresses: a row per node and a total.
	r := testReport()
	r.Op, r.K, r.MemoriesPerUser = "search", 10, 5000
	mean, empty := 7.5, int64(4)
	r.ResultsMean, r.EmptyResults = &mean, &empty
	r.Load = &benchLoad{Clients: 32, Memories: 5000, ElapsedS: 2.5, OpsPerS: 2000}
	r.Addrs = []string{"http://n1:7480", "http://n2:7480"}
	r.PerAddr = []benchAddrReport{
		{Addr: "http://n1:7480", Clients: 8, Ops: 6000, OpsPerS: 600, LatencyMs: benchLatency{P50: 1}},
		{Addr: "http://n2:7480", Clients: 8, Ops: 6345, Errors: 3, OpsPerS: 633, LatencyMs: benchLatency{P50: 2}},
	}
	r.Interrupted = true
	b.Reset()
	if err := printBenchReport(&b, r); err != nil {
		t.Fatal(err)
	}
	out = b.String()
	for _, want := range []string{
		"ADDR            CLIENTS  OPS    ERRORS  OPS/S   P50",
		"http://n2:7480  8        6345   3       633.0   2.000",
		"all             16       12345  3       1233.0  10.250",
		"load           5000 memories in 2.5s (2000.0/s) with 32 clients, 0 errors\n",
		"results        7.50 per search, 4 empty\n",
		"(interrupted)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}

func TestBenchJSON(t *testing.T) {
	var b bytes.Buffer
	r := testReport()
	if err := benchOutput(&globals{output: "json"}, &b, r); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatalf("%v:\n%s", err, b.String())
	}
	for k, want := range map[string]any{
		"op": "write", "clients": 16.0, "duration_s": 10.012, "target_duration_s": 10.0, "warmup_s": 1.0,
		"ops": 12345.0, "errors": 3.0, "ops_per_s": 1233.0, "size_bytes": 200.0, "users": 1000.0,
		"user_prefix": "bench-write-abc123-", "run_id": "abc123", "connections": 16.0,
	} {
		if m[k] != want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
	lat, _ := m["latency_ms"].(map[string]any)
	for k, want := range map[string]float64{"p50": 10.25, "p90": 20.5, "p99": 40.125, "p999": 80, "max": 120.75} {
		if lat[k] != want {
			t.Errorf("latency_ms.%s = %v, want %v", k, lat[k], want)
		}
	}
	for _, absent := range []string{"load", "k", "per_addr", "results_mean", "interrupted"} {
		if _, ok := m[absent]; ok {
			t.Errorf("%s present in a write report", absent)
		}
	}

	// No errors: errors_by_code is {} rather than null.
	r.Errors, r.ErrorsByCode, r.ErrorSamples = 0, nil, nil
	b.Reset()
	_ = benchOutput(&globals{output: "json"}, &b, r)
	if !strings.Contains(b.String(), `"errors_by_code": {}`) {
		t.Errorf("errors_by_code:\n%s", b.String())
	}
}

func TestBenchRunFake(t *testing.T) {
	pool, err := newBenchPool([]string{unreachable, "http://127.0.0.1:2"}, 4, time.Second, "", benchRouteNode)
	if err != nil {
		t.Fatal(err)
	}
	calls := make([]int, 4) // per worker; each worker writes only its own slot
	op := func(_ context.Context, c *client.Client, w int, rng *rand.Rand) (int, error) {
		calls[w]++
		time.Sleep(time.Millisecond)
		if want, _ := pool.forWorker(w); c != want {
			t.Errorf("worker %d got client %s", w, c.Addr())
		}
		if calls[w]%10 == 0 {
			return -1, &client.APIError{Status: 503, Code: "unavailable"}
		}
		return -1, nil
	}
	b := &benchRun{pool: pool, clients: 4, warmup: 50 * time.Millisecond, duration: 200 * time.Millisecond, op: op}
	start := time.Now()
	res := b.run(context.Background())
	took := time.Since(start)
	total := 0
	for _, c := range calls {
		total += c
	}
	got := res.total.ops + res.total.errors()
	if got == 0 || got >= int64(total) {
		t.Errorf("recorded %d of %d calls; warm-up calls must be left out", got, total)
	}
	if res.total.errs["unavailable"] == 0 {
		t.Errorf("errors %v", res.total.errs)
	}
	if res.elapsed < 200*time.Millisecond || took > 2*time.Second {
		t.Errorf("elapsed %s, took %s", res.elapsed, took)
	}
	if len(res.perAddr) != 2 || res.perAddr[0].ops == 0 || res.perAddr[1].ops == 0 {
		t.Errorf("per address: %d", len(res.perAddr))
	}
	if res.interrupted {
		t.Error("interrupted")
	}

	// A cancelled context ends the run early and says so.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	b.duration = time.Minute
	start = time.Now()
	res = b.run(ctx)
	if time.Since(start) > 5*time.Second || !res.interrupted {
		t.Errorf("cancel: took %s, interrupted %v", time.Since(start), res.interrupted)
	}
}

// An open-loop run issues requests at the rate asked, whatever the clients' number, and counts a request's
// latency from when it was due: a server slower than the rate shows as latencies that grow with the queue.
func TestBenchRunOpenLoop(t *testing.T) {
	pool, err := newBenchPool([]string{unreachable}, 4, time.Second, "", benchRouteNode)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	fast := func(context.Context, *client.Client, int, *rand.Rand) (int, error) {
		calls.Add(1)
		return -1, nil
	}
	b := &benchRun{pool: pool, clients: 4, warmup: 100 * time.Millisecond, duration: 400 * time.Millisecond, op: fast, rate: 100}
	res := b.run(context.Background())
	// 50 requests are due in the whole run, 40 of them after the warm-up.
	if n := calls.Load(); n < 45 || n > 51 {
		t.Errorf("%d requests at 100/s over 0.5 s, want about 50", n)
	}
	if res.total.ops < 36 || res.total.ops > 41 {
		t.Errorf("%d requests measured, want about 40", res.total.ops)
	}

	// One client, each request taking 20 ms, 100 due per second: the queue grows by half a request every due
	// time, and the last requests of the run waited for the ones before them.
	slow := func(context.Context, *client.Client, int, *rand.Rand) (int, error) {
		time.Sleep(20 * time.Millisecond)
		return -1, nil
	}
	b = &benchRun{pool: pool, clients: 1, warmup: 0, duration: 300 * time.Millisecond, op: slow, rate: 100}
	res = b.run(context.Background())
	if p99 := latencyOf(res.total.hist).P99; p99 < 100 {
		t.Errorf("p99 %.1f ms: the requests' wait for the busy client is not counted", p99)
	}
	// About 15 of the 30 requests due were sent before the end; the rest are unsent, not sent late.
	if sent := res.total.ops; sent > 20 || res.unsent < 10 || sent+res.unsent != 30 {
		t.Errorf("%d sent and %d unsent of 30 due", sent, res.unsent)
	}
}

func TestBenchText(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	for _, size := range []int{1, 2, 7, 50, 200, 1000, 32 << 10} {
		for range 50 {
			s := benchText(rng, size)
			if s == "" || len(s) > size || !utf8Valid(s) {
				t.Fatalf("size %d: %q (%d bytes)", size, s, len(s))
			}
			if size >= 50 && len(s) < size-40 {
				t.Errorf("size %d: only %d bytes: %q", size, len(s), s)
			}
			if s[0] < 'A' || s[0] > 'Z' {
				t.Errorf("not capitalised: %q", s)
			}
			if strings.Contains(s, "%") {
				t.Errorf("unfilled slot: %q", s)
			}
			seen[s] = true
		}
	}
	if len(seen) < 250 {
		t.Errorf("only %d distinct texts of 350", len(seen))
	}
	words := map[string]bool{}
	for _, w := range strings.Fields(benchText(rng, 32<<10)) {
		words[strings.ToLower(strings.Trim(w, ".,:"))] = true
	}
	if len(words) < 200 {
		t.Errorf("vocabulary of a 32 KiB text: %d words", len(words))
	}
	qs := map[string]bool{}
	for range 100 {
		qs[benchQuery(rng)] = true
	}
	if len(qs) < 80 {
		t.Errorf("only %d distinct queries of 100", len(qs))
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
