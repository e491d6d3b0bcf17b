// Command etcdpeer is the etcd side of memcluster's "3-replica acknowledged writes" comparison
// (docs/benchmarks.md, "Peers in the same run"). It is a throwaway nested module so etcd's
// dependencies never enter memcluster's go.mod.
//
//	etcdpeer serve --dir D --base 27510 [--member M]
//	                                        three embedded etcd members on loopback in this process
//	                                        (client ports base, base+2, base+4; peer ports +1),
//	                                        each with its own data dir and WAL fsync; runs until killed.
//	                                        With --member M only member M (1-3): three such processes
//	                                        are etcd as it is deployed, one member per process
//	etcdpeer load --endpoints a,b,c --clients N --duration D --warmup W --size S [--route any|leader]
//	                                        closed-loop puts of S-byte values under fresh keys, clients
//	                                        spread round-robin over the endpoints (any), or all at the
//	                                        leader's (leader); prints JSON
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: etcdpeer serve|load [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "load":
		err = load(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcdpeer:", err)
		os.Exit(1)
	}
}

func mustURL(s string) url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return *u
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	dir := fs.String("dir", "etcd-data", "data directory (one sub-directory per member)")
	base := fs.Int("base", 27510, "first port; member i uses base+2i (client) and base+2i+1 (peer)")
	member := fs.Int("member", 0, "run only member N (1-3) in this process, as etcd is deployed; 0: all three here")
	_ = fs.Parse(args)
	if *member < 0 || *member > 3 {
		return fmt.Errorf("--member %d: give 1, 2 or 3, or 0 for all three", *member)
	}

	var initial []string
	for i := range 3 {
		initial = append(initial, fmt.Sprintf("e%d=http://127.0.0.1:%d", i+1, *base+2*i+1))
	}
	cfgs := make([]*embed.Config, 3)
	for i := range 3 {
		c := embed.NewConfig()
		c.Name = fmt.Sprintf("e%d", i+1)
		c.Dir = filepath.Join(*dir, c.Name)
		cu := mustURL(fmt.Sprintf("http://127.0.0.1:%d", *base+2*i))
		pu := mustURL(fmt.Sprintf("http://127.0.0.1:%d", *base+2*i+1))
		c.ListenClientUrls, c.AdvertiseClientUrls = []url.URL{cu}, []url.URL{cu}
		c.ListenPeerUrls, c.AdvertisePeerUrls = []url.URL{pu}, []url.URL{pu}
		c.InitialCluster = strings.Join(initial, ",")
		c.InitialClusterToken = "memcluster-bench"
		c.ClusterState = embed.ClusterStateFlagNew
		c.LogLevel = "error"
		c.ListenMetricsUrls = nil
		cfgs[i] = c
	}
	if *member > 0 {
		cfgs = cfgs[*member-1 : *member]
	}
	// StartEtcd of one member waits for its peers' listeners, so start all of this process's members at once.
	etcds := make([]*embed.Etcd, len(cfgs))
	errs := make([]error, len(cfgs))
	var wg sync.WaitGroup
	for i := range cfgs {
		wg.Go(func() { etcds[i], errs[i] = embed.StartEtcd(cfgs[i]) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("start member %s: %w", cfgs[i].Name, err)
		}
	}
	for _, e := range etcds {
		select {
		case <-e.Server.ReadyNotify():
		case <-time.After(60 * time.Second):
			return fmt.Errorf("member %s not ready after 60s", e.Config().Name)
		}
	}
	fmt.Println("ready")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	var err error
	select {
	case <-sig:
	case err = <-etcds[0].Err():
		err = fmt.Errorf("member %s: %w", etcds[0].Config().Name, err)
	}
	for _, e := range etcds {
		e.Close()
	}
	return err
}

type latency struct {
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

type report struct {
	Op        string   `json:"op"`
	Endpoints []string `json:"endpoints"`
	Clients   int      `json:"clients"`
	SizeBytes int      `json:"size_bytes"`
	WarmupS   float64  `json:"warmup_s"`
	DurationS float64  `json:"duration_s"`
	Ops       int64    `json:"ops"`
	Errors    int64    `json:"errors"`
	OpsPerS   float64  `json:"ops_per_s"`
	LatencyMs latency  `json:"latency_ms"`
}

func load(args []string) error {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	endpoints := fs.String("endpoints", "127.0.0.1:27510,127.0.0.1:27512,127.0.0.1:27514", "comma-separated client endpoints")
	clients := fs.Int("clients", 16, "concurrent closed-loop clients")
	duration := fs.Duration("duration", 10*time.Second, "measured time")
	warmup := fs.Duration("warmup", time.Second, "unmeasured time before")
	size := fs.Int("size", 200, "value size in bytes")
	route := fs.String("route", "any", "any: clients round-robin over the endpoints (a follower forwards to its leader); "+
		"leader: every client at the leader's endpoint, as memctl bench --route leader sends each put to its shard's leader")
	_ = fs.Parse(args)
	eps := strings.Split(*endpoints, ",")
	switch *route {
	case "any":
	case "leader":
		ep, err := leaderEndpoint(eps)
		if err != nil {
			return err
		}
		eps = []string{ep}
	default:
		return fmt.Errorf("--route %q: give any or leader", *route)
	}

	// One gRPC connection per endpoint, shared by the clients assigned to it (as memctl bench
	// shares one keep-alive pool per node).
	conns := make([]*clientv3.Client, len(eps))
	for i, ep := range eps {
		c, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, DialTimeout: 10 * time.Second})
		if err != nil {
			return err
		}
		defer c.Close()
		conns[i] = c
	}
	ctx := context.Background()
	if _, err := conns[0].Put(ctx, "bench/probe", "x"); err != nil {
		return fmt.Errorf("probe put: %w", err)
	}

	value := strings.Repeat("memory ", *size/7+1)[:*size]
	start := time.Now()
	measureFrom := start.Add(*warmup)
	stopAt := measureFrom.Add(*duration)
	var errs atomic.Int64
	lats := make([][]time.Duration, *clients)
	var wg sync.WaitGroup
	run := rand.Uint32()
	for c := range *clients {
		wg.Go(func() {
			cli := conns[c%len(conns)]
			var mine []time.Duration
			for i := 0; ; i++ {
				t := time.Now()
				if !t.Before(stopAt) {
					break
				}
				key := fmt.Sprintf("bench/%08x/%03d/%09d", run, c, i)
				_, err := cli.Put(ctx, key, value)
				d := time.Since(t)
				if t.Before(measureFrom) {
					continue
				}
				if err != nil {
					errs.Add(1)
					continue
				}
				mine = append(mine, d)
			}
			lats[c] = mine
		})
	}
	wg.Wait()
	elapsed := time.Since(measureFrom)
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	slices.Sort(all)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	r := report{
		Op: "etcd-put", Endpoints: eps, Clients: *clients, SizeBytes: *size,
		WarmupS: warmup.Seconds(), DurationS: elapsed.Seconds(),
		Ops: int64(len(all)), Errors: errs.Load(), OpsPerS: float64(len(all)) / elapsed.Seconds(),
	}
	if n := len(all); n > 0 {
		var sum time.Duration
		for _, d := range all {
			sum += d
		}
		r.LatencyMs = latency{P50: ms(all[n/2]), P99: ms(all[min(n-1, n*99/100)]), Max: ms(all[n-1]), Mean: ms(sum / time.Duration(n))}
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// leaderEndpoint returns the endpoint of the member that leads, as the members' status reports it. A member that
// does not answer is passed over, and a cluster still electing is asked again, for up to ten seconds.
func leaderEndpoint(eps []string) (string, error) {
	c, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 10 * time.Second})
	if err != nil {
		return "", err
	}
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var errs []error
		for _, ep := range eps {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			st, err := c.Status(ctx, ep)
			cancel()
			if err != nil {
				errs = append(errs, fmt.Errorf("status of %s: %w", ep, err))
				continue
			}
			if st.Leader != 0 && st.Header.MemberId == st.Leader {
				return ep, nil
			}
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no member of %v leads: %w", eps, errors.Join(errs...))
		}
		time.Sleep(200 * time.Millisecond)
	}
}
