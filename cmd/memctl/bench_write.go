package main

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/client"
	"github.com/memcluster/memcluster/memory"
)

// Defaults of bench write.
const (
	benchWriteClients = 16
	benchWriteSize    = 200
	benchWriteUsers   = 1000
)

type benchWriteOptions struct {
	benchOptions
	size  int
	users int
	batch int
}

func newBenchWriteCmd(g *globals) *cobra.Command {
	o := &benchWriteOptions{}
	cmd := &cobra.Command{
		Use:   "write [flags]",
		Short: "Put memories as fast as the cluster takes them",
		Long: `Put memories as fast as the cluster takes them.

Every client puts memories of about --size bytes of varied English text for
users picked at random among --users users named bench-write-<run id>-<i>.
The memories carry run_id bench-<run id> and the tag "bench". With --batch N each
request is a batch put of N memories of one user (POST /v1/memories/batch): a fast
way to load a cluster; ops then count requests.`,
		Example: `  memctl bench write --clients 32 --duration 30s
  memctl bench write --addr-list http://n1:7480,http://n2:7480,http://n3:7480 -o json`,
		Args: cobra.NoArgs,
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
			prefix := "bench-write-" + runID + "-"
			r := o.report("write", addrs, g)
			r.RunID, r.SizeBytes, r.Users, r.UserPrefix = runID, o.size, o.users, prefix
			if o.batch > 1 {
				r.Batch = o.batch
			}
			run := o.runner(pool, benchWriteOp(prefix, "bench-"+runID, o.users, o.size, o.batch), cmd.ErrOrStderr(), "bench write")
			r.fill(run.run(cmd.Context()), pool)
			if err := benchOutput(g, cmd.OutOrStdout(), r); err != nil {
				return err
			}
			return benchDone(r)
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

func (o *benchWriteOptions) addFlags(f *pflag.FlagSet) {
	o.benchOptions.addFlags(f, benchWriteClients)
	f.IntVar(&o.size, "size", benchWriteSize, "text size of each memory in bytes")
	f.IntVar(&o.users, "users", benchWriteUsers, "number of users the memories are spread over")
	f.IntVar(&o.batch, "batch", 1, "memories per request: above 1, batch puts of one user's memories")
}

func (o *benchWriteOptions) validate(g *globals) ([]string, error) {
	addrs, err := o.benchOptions.validate(g)
	if err != nil {
		return nil, err
	}
	if max := memory.DefaultLimits.MaxTextBytes; o.size < 1 || o.size > max {
		return nil, fmt.Errorf("--size %d: must be between 1 and %d", o.size, max)
	}
	if o.users < 1 {
		return nil, fmt.Errorf("--users %d: must be at least 1", o.users)
	}
	if o.batch < 1 || o.batch > apiv1.MaxBatch {
		return nil, fmt.Errorf("--batch %d: must be between 1 and %d", o.batch, apiv1.MaxBatch)
	}
	return addrs, nil
}

// benchWriteOp puts one memory of a random user, or a batch of them.
func benchWriteOp(prefix, runID string, users, size, batch int) benchOp {
	tags := []string{"bench"}
	return func(ctx context.Context, c *client.Client, _ int, rng *rand.Rand) (int, error) {
		user := benchUser(prefix, rng.IntN(users))
		reqs := make([]apiv1.PutRequest, max(batch, 1))
		for i := range reqs {
			reqs[i] = apiv1.PutRequest{UserID: user, AgentID: "memctl-bench", RunID: runID, Text: benchText(rng, size), Tags: tags}
		}
		var err error
		if batch > 1 {
			_, err = c.PutBatch(ctx, reqs)
		} else {
			_, err = c.Put(ctx, reqs[0])
		}
		return -1, err
	}
}
