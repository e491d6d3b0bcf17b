package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memcluster/memcluster/client"
	"github.com/memcluster/memcluster/memory"
)

// Bench limits and defaults.
const (
	benchMaxClients      = 4096
	benchDefaultDuration = 10 * time.Second
	benchDefaultWarmup   = time.Second
	// benchProgressEvery spaces the progress lines of a timed run on stderr.
	benchProgressEvery = 5 * time.Second
	// Latencies are recorded in microseconds from 1µs to 10 minutes with 3
	// significant digits; a slower answer is recorded as 10 minutes.
	benchHistMin    = 1
	benchHistMax    = int64(10 * time.Minute / time.Microsecond)
	benchHistDigits = 3
	// benchRefusedPause is how long a client waits after a refused connection.
	benchRefusedPause = 10 * time.Millisecond
	// benchMaxRate bounds --rate: past it the schedule's resolution, not the server, sets the pace.
	benchMaxRate = 1_000_000
)

func newBenchCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Generate load against a running cluster and report throughput and latency",
		Long: `Generate load against a running cluster and report throughput and latency.

Each client is one goroutine sending requests back to back (closed loop) over
keep-alive connections. Requests started during the warm-up are not counted.
ops counts successful requests, errors the failed ones by error code; latency
percentiles come from an HDR histogram of the successful requests.

--addr-list spreads the clients round-robin over several nodes, so requests
enter the cluster at every node; without it every client uses --addr.

--rate R runs open loop instead: requests are due at R per second in all,
each taken by the next free client, and a request's latency counts from when
it was due, so time spent waiting for a free client counts too (no coordinated
omission). A rate the clients cannot keep up with shows as ops_per_s below
rate_per_s, as growing latencies, and as unsent: the requests due before the
end that no client was free to send by then.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unknown command %q for \"memctl bench\"", args[0])
			}
			return errors.New(`missing subcommand (try "memctl bench write" or "memctl bench search")`)
		},
	}
	cmd.AddCommand(newBenchWriteCmd(g), newBenchSearchCmd(g), newBenchSessionCmd(g), newBenchContextCmd(g))
	return cmd
}

// benchOptions are the flags every bench subcommand shares.
type benchOptions struct {
	clients  int
	duration time.Duration
	warmup   time.Duration
	addrList []string
	rate     float64 // requests per second in all, open loop; 0 for closed loop
	route    string  // benchRouteNode or benchRouteLeader
}

// Where a bench client sends a user's requests (--route).
const (
	benchRouteNode   = "node"   // to the client's node, which forwards what it does not lead
	benchRouteLeader = "leader" // to the leader of the user's shard once an answer has named it
)

// report starts the report of a run of op with the settings every bench command shares.
func (o *benchOptions) report(op string, addrs []string, g *globals) benchReport {
	return benchReport{Op: op, Addrs: addrs, Route: o.route, Clients: o.clients, WarmupS: o.warmup.Seconds(),
		TargetS: o.duration.Seconds(), TimeoutS: g.timeout.Seconds(), RatePerS: o.rate}
}

// runner is a run of op over pool with these clients, warm-up and duration.
func (o *benchOptions) runner(pool *benchPool, op benchOp, progress io.Writer, label string) *benchRun {
	return &benchRun{pool: pool, clients: o.clients, warmup: o.warmup, duration: o.duration, op: op,
		rate: o.rate, progress: progress, label: label}
}

func (o *benchOptions) addFlags(f *pflag.FlagSet, defaultClients int) {
	f.IntVar(&o.clients, "clients", defaultClients, "concurrent clients")
	f.DurationVar(&o.duration, "duration", benchDefaultDuration, "measured run time")
	f.DurationVar(&o.warmup, "warmup", benchDefaultWarmup, "run time before measuring starts, 0 for none")
	f.StringSliceVar(&o.addrList, "addr-list", nil, "node addresses to spread clients over round-robin, comma-separated (default: --addr)")
	f.Float64Var(&o.rate, "rate", 0, "requests per second in all, open loop, latency counted from when each was due (default 0: closed loop)")
	f.StringVar(&o.route, "route", benchRouteNode, "where a client sends a user's requests: node (its node, which forwards to the shard's leader) or leader (the leader the cluster named on an earlier answer, when it is one of the addresses given)")
}

// validate checks the shared flags and returns the node addresses to use.
func (o *benchOptions) validate(g *globals) ([]string, error) {
	if o.clients < 1 || o.clients > benchMaxClients {
		return nil, fmt.Errorf("--clients %d: must be between 1 and %d", o.clients, benchMaxClients)
	}
	if o.duration <= 0 {
		return nil, fmt.Errorf("--duration %s: must be positive", o.duration)
	}
	if o.warmup < 0 {
		return nil, fmt.Errorf("--warmup %s is negative", o.warmup)
	}
	if o.rate < 0 || o.rate > benchMaxRate || math.IsNaN(o.rate) {
		return nil, fmt.Errorf("--rate %g: must be between 0 (closed loop) and %d requests per second", o.rate, benchMaxRate)
	}
	if o.route != benchRouteNode && o.route != benchRouteLeader {
		return nil, fmt.Errorf("--route %q: must be %s or %s", o.route, benchRouteNode, benchRouteLeader)
	}
	return benchAddrs(g.addr, o.addrList)
}

// benchAddrs returns list, checked, or just addr when list is empty.
func benchAddrs(addr string, list []string) ([]string, error) {
	if len(list) == 0 {
		return []string{addr}, nil
	}
	out := make([]string, 0, len(list))
	for _, a := range list {
		a = strings.TrimSpace(a)
		if a == "" {
			return nil, errors.New("--addr-list: empty address")
		}
		if _, err := client.New(a); err != nil {
			return nil, fmt.Errorf("--addr-list: %w", err)
		}
		out = append(out, a)
	}
	return out, nil
}

// benchPool is one client per node address over a shared keep-alive transport,
// which counts the connections it dials.
type benchPool struct {
	clients []*client.Client
	dials   atomic.Int64
	tr      *http.Transport
}

// newBenchPool sizes the idle pool so every concurrent request can return its
// connection: without that, Go keeps 2 idle connections per host and the rest
// are closed and re-dialled, which measures TCP set-up instead of the server.
func newBenchPool(addrs []string, concurrency int, timeout time.Duration, token, route string) (*benchPool, error) {
	p := &benchPool{}
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		p.dials.Add(1)
		return dialer.DialContext(ctx, network, addr)
	}
	tr.MaxIdleConns = 0 // no overall cap
	tr.MaxIdleConnsPerHost = concurrency + 8
	tr.MaxConnsPerHost = 0
	tr.IdleConnTimeout = 90 * time.Second
	p.tr = tr
	hc := &http.Client{Transport: tr}
	for _, a := range addrs {
		// No retries of refusals: a run reports each request as the cluster answered it.
		opts := []client.Option{client.WithHTTPClient(hc), client.WithTimeout(timeout), client.WithOverloadRetries(0)}
		if token != "" {
			opts = append(opts, client.WithBearerToken(token))
		}
		if route == benchRouteLeader {
			// Only the nodes the run was given: a cluster that names another address is not followed there.
			opts = append(opts, client.WithLeaderRouting(addrs...))
		}
		c, err := client.New(a, opts...)
		if err != nil {
			return nil, err
		}
		p.clients = append(p.clients, c)
	}
	return p, nil
}

// forWorker spreads workers round-robin over the nodes.
func (p *benchPool) forWorker(i int) (*client.Client, int) {
	n := i % len(p.clients)
	return p.clients[n], n
}

func (p *benchPool) close() { p.tr.CloseIdleConnections() }

// benchRecorder collects what one node's clients measured. A mutex, not a
// histogram per client: a histogram is ~200 KB and requests take far longer
// than the lock.
type benchRecorder struct {
	mu   sync.Mutex
	hist *hdrhistogram.Histogram
	ops  int64
	errs map[string]int64
	// results and empty count the results of searches and those with none.
	results, empty int64
	sample         map[string]string // first message per error code
}

func newBenchRecorder() *benchRecorder {
	return &benchRecorder{
		hist:   hdrhistogram.New(benchHistMin, benchHistMax, benchHistDigits),
		errs:   map[string]int64{},
		sample: map[string]string{},
	}
}

func (r *benchRecorder) record(lat time.Duration, results int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		code := benchErrorCode(err)
		r.errs[code]++
		if _, ok := r.sample[code]; !ok {
			r.sample[code] = err.Error()
		}
		return
	}
	r.ops++
	if results >= 0 {
		r.results += int64(results)
		if results == 0 {
			r.empty++
		}
	}
	us := lat.Microseconds()
	if us < benchHistMin {
		us = benchHistMin
	}
	if us > benchHistMax {
		us = benchHistMax
	}
	_ = r.hist.RecordValue(us) // in range by construction
}

func (r *benchRecorder) errors() int64 {
	var n int64
	for _, c := range r.errs {
		n += c
	}
	return n
}

// merge adds o into r.
func (r *benchRecorder) merge(o *benchRecorder) {
	r.hist.Merge(o.hist)
	r.ops += o.ops
	r.results += o.results
	r.empty += o.empty
	for k, v := range o.errs {
		r.errs[k] += v
	}
	for k, v := range o.sample {
		if _, ok := r.sample[k]; !ok {
			r.sample[k] = v
		}
	}
}

// benchErrorCode names an error for the errors-by-code count: the API's
// stable code, else a short name for the transport failure.
func benchErrorCode(err error) string {
	if ae, ok := errors.AsType[*client.APIError](err); ok {
		if ae.Code != "" {
			return ae.Code
		}
		return "http_" + strconv.Itoa(ae.Status)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "conn_refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "conn_reset"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "eof"
	case errors.Is(err, memory.ErrInvalid):
		return "invalid_argument"
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return "timeout"
	}
	return "transport"
}

// benchOp is one request of worker w; rng is the worker's own. It returns
// how many results the request found, or -1 when that does not apply.
type benchOp func(ctx context.Context, c *client.Client, w int, rng *rand.Rand) (int, error)

// benchRun is a timed run: closed loop, or open loop at rate requests per second.
type benchRun struct {
	pool     *benchPool
	clients  int
	warmup   time.Duration
	duration time.Duration
	op       benchOp
	rate     float64   // 0: closed loop
	progress io.Writer // nil for none
	label    string
}

// benchSchedule hands out the due times of an open-loop run: the k-th request is due at start + k/rate.
type benchSchedule struct {
	start time.Time
	rate  float64
	next  atomic.Int64
}

// take returns the next due time, after sleeping until it (or until ctx ends).
func (s *benchSchedule) take(ctx context.Context) time.Time {
	k := s.next.Add(1) - 1
	due := s.start.Add(time.Duration(float64(k) / s.rate * float64(time.Second)))
	if wait := time.Until(due); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	return due
}

// benchResult is what a run measured.
type benchResult struct {
	total       *benchRecorder
	perAddr     []*benchRecorder
	elapsed     time.Duration // from the end of the warm-up until the last request returned
	interrupted bool
	unsent      int64 // open loop: requests due in the measured time that no client was free to send before its end
}

// run starts the clients, stops issuing requests after warm-up + duration and
// waits for those in flight, which are counted: dropping them would hide the
// slowest requests. A cancelled ctx stops the run early; requests it cut short
// are not counted.
func (b *benchRun) run(ctx context.Context) benchResult {
	res := benchResult{total: newBenchRecorder()}
	for range b.pool.clients {
		res.perAddr = append(res.perAddr, newBenchRecorder())
	}
	start := time.Now()
	measureFrom := start.Add(b.warmup)
	stopAt := measureFrom.Add(b.duration)

	// t0 is when a request starts counting: now (closed loop), or when it was due (open loop).
	t0 := func() time.Time { return time.Now() }
	if b.rate > 0 {
		sched := &benchSchedule{start: start, rate: b.rate}
		t0 = func() time.Time { return sched.take(ctx) }
	}
	var wg sync.WaitGroup
	for w := range b.clients {
		c, n := b.pool.forWorker(w)
		rec := res.perAddr[n]
		rng := rand.New(rand.NewPCG(uint64(start.UnixNano()), uint64(w)))
		wg.Go(func() {
			for ctx.Err() == nil {
				t0 := t0()
				// Open loop: a request due before the end but not yet sent at the end is left unsent (counted
				// in unsent), so a rate the servers cannot keep up with does not stretch the run.
				if !t0.Before(stopAt) || !time.Now().Before(stopAt) || ctx.Err() != nil {
					return
				}
				n, err := b.op(ctx, c, w, rng)
				lat := time.Since(t0)
				if ctx.Err() != nil {
					return
				}
				if !t0.Before(measureFrom) {
					rec.record(lat, n, err)
				}
				if err != nil && benchErrorCode(err) == "conn_refused" {
					// Nothing listens: do not spin on a shared machine.
					time.Sleep(benchRefusedPause)
				}
			}
		})
	}

	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	if b.progress != nil {
		tick := time.NewTicker(benchProgressEvery)
		defer tick.Stop()
	loop:
		for {
			select {
			case <-done:
				break loop
			case now := <-tick.C:
				b.printProgress(now, measureFrom, res.perAddr)
			}
		}
	}
	<-done
	res.elapsed = time.Since(measureFrom)
	if res.elapsed < 0 {
		res.elapsed = 0 // interrupted during the warm-up
	}
	res.interrupted = ctx.Err() != nil
	for _, r := range res.perAddr {
		res.total.merge(r)
	}
	if b.rate > 0 && !res.interrupted {
		due := int64(math.Ceil(b.duration.Seconds() * b.rate)) // due in [measureFrom, stopAt)
		res.unsent = max(due-res.total.ops-res.total.errors(), 0)
	}
	return res
}

func (b *benchRun) printProgress(now, measureFrom time.Time, recs []*benchRecorder) {
	if now.Before(measureFrom) {
		fmt.Fprintf(b.progress, "%s: warming up\n", b.label)
		return
	}
	var ops, errs int64
	for _, r := range recs {
		r.mu.Lock()
		ops += r.ops
		errs += r.errors()
		r.mu.Unlock()
	}
	el := now.Sub(measureFrom)
	fmt.Fprintf(b.progress, "%s: %s/%s %d ops %.0f ops/s %d errors\n",
		b.label, el.Round(time.Second), b.duration, ops, float64(ops)/el.Seconds(), errs)
}

// benchLatency is the latency summary in milliseconds.
type benchLatency struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

func latencyOf(h *hdrhistogram.Histogram) benchLatency {
	if h.TotalCount() == 0 {
		return benchLatency{}
	}
	ms := func(us int64) float64 { return roundTo(float64(us)/1000, 3) }
	return benchLatency{
		Min:  ms(h.Min()),
		Mean: roundTo(h.Mean()/1000, 3),
		P50:  ms(h.ValueAtQuantile(50)),
		P90:  ms(h.ValueAtQuantile(90)),
		P99:  ms(h.ValueAtQuantile(99)),
		P999: ms(h.ValueAtQuantile(99.9)),
		Max:  ms(h.Max()),
	}
}

func roundTo(v float64, digits int) float64 {
	s := strconv.FormatFloat(v, 'f', digits, 64)
	r, _ := strconv.ParseFloat(s, 64)
	return r
}

// benchAddrReport is one node's share of a run with several nodes.
type benchAddrReport struct {
	Addr      string           `json:"addr"`
	Clients   int              `json:"clients"`
	Ops       int64            `json:"ops"`
	Errors    int64            `json:"errors"`
	OpsPerS   float64          `json:"ops_per_s"`
	LatencyMs benchLatency     `json:"latency_ms"`
	ErrorsBy  map[string]int64 `json:"errors_by_code,omitempty"`
}

// benchLoad is the load phase of bench search.
type benchLoad struct {
	Clients  int     `json:"clients"`
	Memories int64   `json:"memories"` // stored
	Errors   int64   `json:"errors"`   // puts that failed after retries
	ElapsedS float64 `json:"elapsed_s"`
	OpsPerS  float64 `json:"ops_per_s"`
}

// benchReport is the whole output of a run: the settings, then the figures.
type benchReport struct {
	Op        string   `json:"op"` // write or search
	Addrs     []string `json:"addrs"`
	Route     string   `json:"route,omitempty"` // node or leader (--route)
	Clients   int      `json:"clients"`
	WarmupS   float64  `json:"warmup_s"`
	TargetS   float64  `json:"target_duration_s"`
	TimeoutS  float64  `json:"timeout_s"`
	RunID     string   `json:"run_id,omitempty"`
	SizeBytes int      `json:"size_bytes,omitempty"` // write
	// Batch: memories per request (write --batch); ops count requests, so memories/s is ops_per_s × batch.
	Batch int `json:"batch,omitempty"`
	Users int `json:"users"`
	// UserPrefix: the users are UserPrefix0 .. UserPrefix<Users-1>.
	UserPrefix      string            `json:"user_prefix"`
	MemoriesPerUser int               `json:"memories_per_user,omitempty"` // search
	K               int               `json:"k,omitempty"`                 // search
	Stale           bool              `json:"stale,omitempty"`             // search
	Load            *benchLoad        `json:"load,omitempty"`              // search without --skip-load
	DurationS       float64           `json:"duration_s"`                  // measured
	Ops             int64             `json:"ops"`
	Errors          int64             `json:"errors"`
	ErrorsByCode    map[string]int64  `json:"errors_by_code"`
	ErrorSamples    map[string]string `json:"error_samples,omitempty"`
	OpsPerS         float64           `json:"ops_per_s"`
	LatencyMs       benchLatency      `json:"latency_ms"`
	ResultsMean     *float64          `json:"results_mean,omitempty"`  // search
	EmptyResults    *int64            `json:"empty_results,omitempty"` // search
	Connections     int64             `json:"connections"`             // TCP connections dialled
	// RatePerS: the open-loop rate asked for (--rate); absent for a closed-loop run. Unsent: requests due in the
	// measured time that no client was free to send before it ended (the rate was more than the clients and
	// servers could take).
	RatePerS    float64           `json:"rate_per_s,omitempty"`
	Unsent      int64             `json:"unsent,omitempty"`
	PerAddr     []benchAddrReport `json:"per_addr,omitempty"` // with more than one address
	Interrupted bool              `json:"interrupted,omitempty"`
	// session: messages per flush, consolidated messages per second, and the flush's own latency.
	Turns          int           `json:"turns,omitempty"`
	MessagesPerS   *float64      `json:"messages_per_s,omitempty"`
	FlushLatencyMs *benchLatency `json:"flush_latency_ms,omitempty"`
}

// fill copies the measured figures of res into r.
func (r *benchReport) fill(res benchResult, pool *benchPool) {
	r.DurationS = roundTo(res.elapsed.Seconds(), 3)
	r.Ops = res.total.ops
	r.Errors = res.total.errors()
	r.ErrorsByCode = res.total.errs
	if len(res.total.sample) > 0 {
		r.ErrorSamples = res.total.sample
	}
	r.OpsPerS = perSecond(r.Ops, res.elapsed)
	r.LatencyMs = latencyOf(res.total.hist)
	r.Connections = pool.dials.Load()
	if r.Op == "search" {
		mean, empty := 0.0, res.total.empty
		if res.total.ops > 0 {
			mean = roundTo(float64(res.total.results)/float64(res.total.ops), 2)
		}
		r.ResultsMean, r.EmptyResults = &mean, &empty
	}
	r.Interrupted = res.interrupted
	r.Unsent = res.unsent
	if len(res.perAddr) > 1 {
		for i, pr := range res.perAddr {
			ar := benchAddrReport{
				Addr: r.Addrs[i], Clients: clientsOf(i, len(res.perAddr), r.Clients),
				Ops: pr.ops, Errors: pr.errors(), OpsPerS: perSecond(pr.ops, res.elapsed),
				LatencyMs: latencyOf(pr.hist),
			}
			if len(pr.errs) > 0 {
				ar.ErrorsBy = pr.errs
			}
			r.PerAddr = append(r.PerAddr, ar)
		}
	}
}

// clientsOf is how many of clients round-robin onto address i of n.
func clientsOf(i, n, clients int) int {
	c := clients / n
	if i < clients%n {
		c++
	}
	return c
}

func perSecond(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return roundTo(float64(n)/d.Seconds(), 1)
}

// printBenchReport writes the settings, the figures, then a latency table.
func printBenchReport(w io.Writer, r benchReport) error {
	tw := newTable(w)
	kv := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	secs := func(s float64) string {
		return (time.Duration(s * float64(time.Second))).Round(time.Millisecond).String()
	}
	kv("op", r.Op)
	kv("addrs", strings.Join(r.Addrs, ","))
	kv("clients", strconv.Itoa(r.Clients))
	kv("warm-up", secs(r.WarmupS))
	if r.RunID != "" {
		kv("run id", r.RunID)
	}
	kv("users", fmt.Sprintf("%d (%s0 .. %s%d)", r.Users, r.UserPrefix, r.UserPrefix, r.Users-1))
	if r.SizeBytes > 0 {
		kv("text size", fmt.Sprintf("%d bytes", r.SizeBytes))
	}
	if r.MemoriesPerUser > 0 {
		kv("memories/user", strconv.Itoa(r.MemoriesPerUser))
	}
	if r.K > 0 {
		kv("k", strconv.Itoa(r.K))
	}
	if r.Stale {
		kv("stale", "true")
	}
	if l := r.Load; l != nil {
		kv("load", fmt.Sprintf("%d memories in %s (%.1f/s) with %d clients, %d errors",
			l.Memories, secs(l.ElapsedS), l.OpsPerS, l.Clients, l.Errors))
	}
	dur := secs(r.DurationS) + " (target " + secs(r.TargetS) + ")"
	if r.Interrupted {
		dur += " (interrupted)"
	}
	kv("duration", dur)
	kv("ops", strconv.FormatInt(r.Ops, 10))
	kv("errors", fmtErrors(r.Errors, r.ErrorsByCode))
	kv("throughput", fmt.Sprintf("%.1f ops/s", r.OpsPerS))
	if r.RatePerS > 0 {
		kv("rate", fmt.Sprintf("%.1f ops/s asked, open loop (latency from when each request was due), %d unsent",
			r.RatePerS, r.Unsent))
	}
	if r.MessagesPerS != nil {
		kv("messages", fmt.Sprintf("%.1f consolidated/s (%d per flush)", *r.MessagesPerS, r.Turns))
	}
	if f := r.FlushLatencyMs; f != nil {
		kv("flush latency", fmt.Sprintf("p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms", f.P50, f.P99, f.P999))
	}
	if r.ResultsMean != nil {
		empty := int64(0)
		if r.EmptyResults != nil {
			empty = *r.EmptyResults
		}
		kv("results", fmt.Sprintf("%.2f per search, %d empty", *r.ResultsMean, empty))
	}
	kv("connections", strconv.FormatInt(r.Connections, 10))
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w)
	tw = newTable(w)
	head := "LATENCY_MS\tP50\tP90\tP99\tP99.9\tMAX\tMEAN"
	if len(r.PerAddr) > 0 {
		head = "ADDR\tCLIENTS\tOPS\tERRORS\tOPS/S\tP50\tP90\tP99\tP99.9\tMAX\tMEAN"
	}
	fmt.Fprintln(tw, head)
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	lat := func(l benchLatency) string {
		return strings.Join([]string{f(l.P50), f(l.P90), f(l.P99), f(l.P999), f(l.Max), f(l.Mean)}, "\t")
	}
	if len(r.PerAddr) == 0 {
		fmt.Fprintf(tw, "all\t%s\n", lat(r.LatencyMs))
	} else {
		for _, a := range r.PerAddr {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.1f\t%s\n", a.Addr, a.Clients, a.Ops, a.Errors, a.OpsPerS, lat(a.LatencyMs))
		}
		fmt.Fprintf(tw, "all\t%d\t%d\t%d\t%.1f\t%s\n", r.Clients, r.Ops, r.Errors, r.OpsPerS, lat(r.LatencyMs))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.ErrorSamples) > 0 {
		fmt.Fprintln(w)
		for _, code := range sortedKeys(r.ErrorSamples) {
			fmt.Fprintf(w, "first %s error: %s\n", code, oneLine(r.ErrorSamples[code], 200))
		}
	}
	return nil
}

// fmtErrors reads like "3 (unavailable 2, timeout 1)", most frequent first.
func fmtErrors(total int64, by map[string]int64) string {
	if total == 0 {
		return "0"
	}
	codes := sortedKeys(by)
	sort.SliceStable(codes, func(i, j int) bool { return by[codes[i]] > by[codes[j]] })
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%s %d", c, by[c])
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, ", "))
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// benchRunID is a short random id that keeps one run's users apart from others'.
func benchRunID() string {
	return fmt.Sprintf("%06x", rand.Uint32()&0xffffff)
}

// benchUser is user i under prefix.
func benchUser(prefix string, i int) string { return prefix + strconv.Itoa(i) }

// checkUserPrefix makes sure the longest user name is a valid user id.
func checkUserPrefix(prefix string, users int) error {
	if prefix == "" {
		return errors.New("--user-prefix is empty")
	}
	last := benchUser(prefix, users-1)
	if err := memory.DefaultLimits.ValidateID("user_id", last, true); err != nil {
		return fmt.Errorf("--user-prefix: %w", err)
	}
	return nil
}

// benchOutput prints r as -o asks.
func benchOutput(g *globals, w io.Writer, r benchReport) error {
	if r.ErrorsByCode == nil {
		r.ErrorsByCode = map[string]int64{} // print {} rather than null
	}
	if g.json() {
		return printJSON(w, r)
	}
	return printBenchReport(w, r)
}

// benchDone turns an interrupted run, or one where nothing worked, into an
// error after its report is out, so scripts see it in the exit code.
func benchDone(r benchReport) error {
	switch {
	case r.Interrupted:
		return errors.New("bench interrupted; the report covers the run until then")
	case r.Ops == 0 && r.Errors > 0:
		return fmt.Errorf("bench: all %d requests failed", r.Errors)
	}
	return nil
}
