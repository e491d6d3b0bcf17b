package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/client"
	"github.com/memcluster/memcluster/memory"
)

// Defaults of bench search.
const (
	benchSearchClients    = 16
	benchSearchMemories   = 10000
	benchSearchUsers      = 1
	benchSearchK          = 10
	benchSearchLoadConc   = 32
	benchSearchUserPrefix = "bench-search-user-"
	// benchLoadProgressEvery spaces the load progress lines on stderr.
	benchLoadProgressEvery = 3 * time.Second
	// benchLoadAttempts is how often one put is tried before it counts as failed.
	benchLoadAttempts = 3
	// benchLoadGiveUp: the load stops when this many puts failed and none worked.
	benchLoadGiveUp = 50
)

type benchSearchOptions struct {
	benchOptions
	memories    int
	users       int
	k           int
	size        int
	loadClients int
	skipLoad    bool
	userPrefix  string
	stale       bool
}

func newBenchSearchCmd(g *globals) *cobra.Command {
	o := &benchSearchOptions{}
	cmd := &cobra.Command{
		Use:   "search [flags]",
		Short: "Load memories, then search them as fast as the cluster answers",
		Long: `Load memories, then search them as fast as the cluster answers.

First --memories memories are put for each of --users users, with
--load-clients concurrent puts; progress goes to stderr. The users are named
bench-search-<run id>-<i>, or <--user-prefix><i> when --user-prefix is given.
Then --clients clients search for --duration with varied queries, each for a
random one of the users.

--skip-load searches users loaded by an earlier run instead: their names are
<--user-prefix><i> for i below --users (default prefix bench-search-user-).`,
		Example: `  memctl bench search --memories 100000 --users 1 --k 10 --clients 16 --duration 30s
  memctl bench search --skip-load --user-prefix bench-search-1a2b3c- --users 10`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			addrs, err := o.validate(g, cmd.Flags())
			if err != nil {
				return err
			}
			conc := o.clients
			if !o.skipLoad {
				conc = max(conc, o.loadClients)
			}
			pool, err := newBenchPool(addrs, conc, g.timeout, g.token, o.route)
			if err != nil {
				return err
			}
			defer pool.close()

			r := o.report("search", addrs, g)
			r.Users, r.UserPrefix, r.K, r.Stale = o.users, o.userPrefix, o.k, o.stale
			stderr := cmd.ErrOrStderr()
			if !o.skipLoad {
				r.RunID = benchRunID()
				if !cmd.Flags().Changed("user-prefix") {
					r.UserPrefix = "bench-search-" + r.RunID + "-"
				}
				r.MemoriesPerUser = o.memories
				l := &benchLoader{
					pool: pool, clients: o.loadClients, prefix: r.UserPrefix, runTag: "bench-" + r.RunID,
					users: o.users, perUser: o.memories, size: o.size, progress: stderr,
				}
				load, err := l.load(cmd.Context())
				r.Load = &load
				if err != nil {
					return err
				}
				fmt.Fprintf(stderr, "bench search: users %s0 .. %s%d; search them again with --skip-load --user-prefix %s --users %d\n",
					r.UserPrefix, r.UserPrefix, o.users-1, r.UserPrefix, o.users)
			}
			run := o.runner(pool, benchSearchOp(r.UserPrefix, o.users, o.k, o.stale), stderr, "bench search")
			r.fill(run.run(cmd.Context()), pool)
			if r.Ops > 0 && *r.EmptyResults == r.Ops {
				fmt.Fprintf(stderr, "bench search: warning: every search found nothing; do users %s0 .. %s%d have memories?\n",
					r.UserPrefix, r.UserPrefix, o.users-1)
			}
			if err := benchOutput(g, cmd.OutOrStdout(), r); err != nil {
				return err
			}
			return benchDone(r)
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

func (o *benchSearchOptions) addFlags(f *pflag.FlagSet) {
	o.benchOptions.addFlags(f, benchSearchClients)
	f.IntVar(&o.memories, "memories", benchSearchMemories, "memories to load per user")
	f.IntVar(&o.users, "users", benchSearchUsers, "number of users to load and search")
	f.IntVar(&o.k, "k", benchSearchK, "results per search, 1..1000")
	f.IntVar(&o.size, "size", benchWriteSize, "text size of each loaded memory in bytes")
	f.IntVar(&o.loadClients, "load-clients", benchSearchLoadConc, "concurrent puts while loading")
	f.BoolVar(&o.skipLoad, "skip-load", false, "search users loaded by an earlier run instead of loading")
	f.StringVar(&o.userPrefix, "user-prefix", benchSearchUserPrefix, "user names are this prefix and 0..users-1 (default when loading: bench-search-<run id>-)")
	f.BoolVar(&o.stale, "stale", false, "let followers answer from their replicas without asking the leader")
}

func (o *benchSearchOptions) validate(g *globals, fs *pflag.FlagSet) ([]string, error) {
	addrs, err := o.benchOptions.validate(g)
	if err != nil {
		return nil, err
	}
	if o.users < 1 {
		return nil, fmt.Errorf("--users %d: must be at least 1", o.users)
	}
	if o.k < 1 || o.k > 1000 {
		return nil, fmt.Errorf("--k %d: must be between 1 and 1000", o.k)
	}
	if err := checkUserPrefix(o.userPrefix, o.users); err != nil {
		return nil, err
	}
	if o.skipLoad {
		for _, f := range []string{"memories", "size", "load-clients"} {
			if fs.Changed(f) {
				return nil, fmt.Errorf("--%s has no effect with --skip-load", f)
			}
		}
		return addrs, nil
	}
	if o.memories < 1 {
		return nil, fmt.Errorf("--memories %d: must be at least 1", o.memories)
	}
	if max := memory.DefaultLimits.MaxTextBytes; o.size < 1 || o.size > max {
		return nil, fmt.Errorf("--size %d: must be between 1 and %d", o.size, max)
	}
	if o.loadClients < 1 || o.loadClients > benchMaxClients {
		return nil, fmt.Errorf("--load-clients %d: must be between 1 and %d", o.loadClients, benchMaxClients)
	}
	if total := int64(o.memories) * int64(o.users); total > 1<<31 {
		return nil, fmt.Errorf("--memories × --users = %d: too many", total)
	}
	return addrs, nil
}

// benchSearchOp searches a random user's memories with a random query.
func benchSearchOp(prefix string, users, k int, stale bool) benchOp {
	return func(ctx context.Context, c *client.Client, _ int, rng *rand.Rand) (int, error) {
		resp, err := c.Search(ctx, apiv1.SearchRequest{
			UserID: benchUser(prefix, rng.IntN(users)),
			Query:  benchQuery(rng),
			K:      k,
			Stale:  stale,
		})
		return len(resp.Results), err
	}
}

// benchLoader puts perUser memories for each of users users as fast as
// clients concurrent puts go.
type benchLoader struct {
	pool          *benchPool
	clients       int
	prefix        string
	runTag        string
	users         int
	perUser       int
	size          int
	progress      io.Writer
	retryInterval time.Duration // first back-off between attempts; 100ms when zero
}

// load returns what it stored. Memory i goes to user i mod users, so every
// user grows evenly and an interrupted load leaves users of similar sizes.
// A put is tried benchLoadAttempts times; one that still fails is counted and
// skipped, unless nothing has worked at all, which ends the load.
func (l *benchLoader) load(ctx context.Context) (benchLoad, error) {
	total := int64(l.users) * int64(l.perUser)
	res := benchLoad{Clients: l.clients}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	backoff := l.retryInterval
	if backoff <= 0 {
		backoff = 100 * time.Millisecond
	}

	var next, stored, failed atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for w := range l.clients {
		c, _ := l.pool.forWorker(w)
		rng := rand.New(rand.NewPCG(uint64(start.UnixNano()), uint64(w)))
		wg.Go(func() {
			for ctx.Err() == nil {
				hi := next.Add(benchLoadBatch)
				lo := hi - benchLoadBatch
				if lo >= total {
					return
				}
				for _, reqs := range l.chunk(rng, lo, min(hi, total)) {
					err := l.putBatch(ctx, c, reqs, backoff)
					switch {
					case err == nil:
						stored.Add(int64(len(reqs)))
					case ctx.Err() != nil:
						return
					default:
						if failed.Add(int64(len(reqs))) >= benchLoadGiveUp && stored.Load() == 0 {
							cancel(fmt.Errorf("load: %d puts failed and none worked, last: %w", failed.Load(), err))
							return
						}
					}
				}
			}
		})
	}

	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(benchLoadProgressEvery)
	defer tick.Stop()
loop:
	for {
		select {
		case <-done:
			break loop
		case <-tick.C:
			el := time.Since(start)
			n := stored.Load()
			rate := float64(n) / el.Seconds()
			eta := "-"
			if rate > 0 {
				eta = time.Duration(float64(total-n-failed.Load()) / rate * float64(time.Second)).Round(time.Second).String()
			}
			fmt.Fprintf(l.progress, "bench search: loaded %d/%d memories in %s (%.0f/s, eta %s), %d failed\n",
				n, total, el.Round(time.Second), rate, eta, failed.Load())
		}
	}
	el := time.Since(start)
	res.Memories, res.Errors = stored.Load(), failed.Load()
	res.ElapsedS = roundTo(el.Seconds(), 3)
	res.OpsPerS = perSecond(res.Memories, el)
	if cause := context.Cause(ctx); cause != nil {
		if errors.Is(cause, context.Canceled) {
			return res, fmt.Errorf("load interrupted after %d of %d memories", res.Memories, total)
		}
		return res, cause
	}
	fmt.Fprintf(l.progress, "bench search: loaded %d memories in %s (%.0f/s), %d failed\n",
		res.Memories, el.Round(time.Millisecond), res.OpsPerS, res.Errors)
	return res, nil
}

// benchLoadBatch is how many memories one load request carries (one user's share goes as one batch put).
const benchLoadBatch = 100

// chunk builds the put requests for memories lo..hi-1, grouped by user (memory i belongs to user i mod users).
func (l *benchLoader) chunk(rng *rand.Rand, lo, hi int64) map[string][]apiv1.PutRequest {
	out := map[string][]apiv1.PutRequest{}
	for i := lo; i < hi; i++ {
		u := benchUser(l.prefix, int(i%int64(l.users)))
		out[u] = append(out[u], apiv1.PutRequest{UserID: u, AgentID: "memctl-bench", RunID: l.runTag,
			Text: benchText(rng, l.size), Tags: []string{"bench"}})
	}
	return out
}

// putBatch stores one user's batch, retried like put.
func (l *benchLoader) putBatch(ctx context.Context, c *client.Client, reqs []apiv1.PutRequest, backoff time.Duration) error {
	var err error
	for a := range benchLoadAttempts {
		if a > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(backoff << (a - 1)):
			}
		}
		if _, err = c.PutBatch(ctx, reqs); err == nil {
			return nil
		}
		if code := benchErrorCode(err); code == "invalid_argument" || code == "too_large" {
			return err
		}
	}
	return err
}
