package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/client"
)

// Defaults of bench session.
const (
	benchSessionClients = 16
	benchSessionTurns   = 20
	benchSessionUsers   = 1000
)

type benchSessionOptions struct {
	benchOptions
	turns, users int
}

func newBenchSessionCmd(g *globals) *cobra.Command {
	o := &benchSessionOptions{}
	cmd := &cobra.Command{
		Use:   "session [flags]",
		Short: "Append conversation turns and flush them through consolidation",
		Long: `Append conversation turns and flush them through consolidation.

Each operation appends --turns messages (alternating user and assistant; the
user turns state facts, preferences, plans and small talk) to a session of a
user picked among --users, then flushes it: segmentation into episodes, fact
extraction and the ADD/UPDATE/DELETE/NONE decision, committed through Raft.
The report adds messages_per_s (consolidated messages per second) and the
latency of the flush alone (flush_latency_ms).`,
		Example: `  memctl bench session --clients 16 --duration 30s -o json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			addrs, err := o.validate(g)
			if err != nil {
				return err
			}
			pool, err := newBenchPool(addrs, o.clients, g.timeout, g.token, o.route)
			if err != nil {
				return err
			}
			defer pool.close()
			runID := benchRunID()
			prefix := "bench-session-" + runID + "-"
			r := o.report("session", addrs, g)
			r.RunID, r.Users, r.UserPrefix, r.Turns = runID, o.users, prefix, o.turns
			flushes := &flushRecorder{hist: hdrhistogram.New(benchHistMin, benchHistMax, benchHistDigits),
				after: time.Now().Add(o.warmup)}
			run := o.runner(pool, benchSessionOp(prefix, runID, o.users, o.turns, flushes), cmd.ErrOrStderr(), "bench session")
			res := run.run(cmd.Context())
			r.fill(res, pool)
			mps := roundTo(float64(r.Ops*int64(o.turns))/res.elapsed.Seconds(), 1)
			fl := latencyOf(flushes.hist)
			r.MessagesPerS, r.FlushLatencyMs = &mps, &fl
			if err := benchOutput(g, cmd.OutOrStdout(), r); err != nil {
				return err
			}
			return benchDone(r)
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

func (o *benchSessionOptions) addFlags(f *pflag.FlagSet) {
	o.benchOptions.addFlags(f, benchSessionClients)
	f.IntVar(&o.turns, "turns", benchSessionTurns, "messages appended before each flush (1..100)")
	f.IntVar(&o.users, "users", benchSessionUsers, "number of users the sessions are spread over")
}

func (o *benchSessionOptions) validate(g *globals) ([]string, error) {
	addrs, err := o.benchOptions.validate(g)
	if err != nil {
		return nil, err
	}
	if o.turns < 1 || o.turns > apiv1.MaxMessages {
		return nil, fmt.Errorf("--turns %d: must be between 1 and %d", o.turns, apiv1.MaxMessages)
	}
	if o.users < 1 {
		return nil, fmt.Errorf("--users %d: must be at least 1", o.users)
	}
	return addrs, nil
}

// flushRecorder keeps the latency of flushes that ended after the warm-up.
type flushRecorder struct {
	mu    sync.Mutex
	hist  *hdrhistogram.Histogram
	after time.Time
}

func (f *flushRecorder) record(start time.Time) {
	end := time.Now()
	if end.Before(f.after) {
		return
	}
	f.mu.Lock()
	_ = f.hist.RecordValue(end.Sub(start).Microseconds())
	f.mu.Unlock()
}

var (
	benchCities = []string{"Paris", "Berlin", "Rome", "Lisbon", "Oslo", "Vienna", "Madrid", "Prague"}
	benchLikes  = []string{"green tea", "jazz", "hiking", "sushi", "chess", "cycling", "opera", "sourdough"}
)

// benchTurn is one message: user turns mix facts, preferences, plans and small talk, as real sessions do.
func benchTurn(rng *rand.Rand, i int) apiv1.Message {
	if i%2 == 1 {
		return apiv1.Message{Role: "assistant", Text: benchText(rng, 160)}
	}
	var text string
	switch rng.IntN(5) {
	case 0:
		text = "I live in " + benchCities[rng.IntN(len(benchCities))] + " now."
	case 1:
		text = "I really like " + benchLikes[rng.IntN(len(benchLikes))] + "."
	case 2:
		text = "Thanks, that helps a lot!"
	case 3:
		text = "Please book a morning flight to " + benchCities[rng.IntN(len(benchCities))] + " for Friday."
	default:
		text = benchText(rng, 120)
	}
	return apiv1.Message{Role: "user", Text: text}
}

// benchSessionOp appends turns to a random user's session and flushes it.
func benchSessionOp(prefix, runID string, users, turns int, flushes *flushRecorder) benchOp {
	return func(ctx context.Context, c *client.Client, w int, rng *rand.Rand) (int, error) {
		user, run := benchUser(prefix, rng.IntN(users)), fmt.Sprintf("bench-%s-%d", runID, w)
		msgs := make([]apiv1.Message, turns)
		for i := range msgs {
			msgs[i] = benchTurn(rng, i)
		}
		if _, err := c.Append(ctx, user, run, apiv1.AppendRequest{AgentID: "memctl-bench", Messages: msgs}); err != nil {
			return -1, err
		}
		start := time.Now()
		_, err := c.Flush(ctx, user, run)
		if err == nil {
			flushes.record(start)
		}
		return -1, err
	}
}
