package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/memcluster/memcluster/apiv1"
)

func newShardSplitCmd(g *globals) *cobra.Command {
	var wait bool
	var waitFor time.Duration
	cmd := &cobra.Command{
		Use:   "split SHARD",
		Short: "Split a shard online into two raft groups, each with half of its hash range",
		Long: `Split a shard online: the upper half of its user-hash range moves to a new shard (the next shard id),
which starts on the same replicas; writes go on meanwhile. With --wait (the default) memctl returns once the
new shard serves its users; --wait=false returns once the split is recorded. One split at a time.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			shard, err := strconv.Atoi(args[0])
			if err != nil || shard < 0 {
				return fmt.Errorf("shard: not a shard number: %q", args[0])
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			start := time.Now()
			res, err := c.SplitShard(cmd.Context(), shard, false)
			if err != nil {
				return fmt.Errorf("shard split %d: %w", shard, err)
			}
			if wait {
				if res, err = waitSplit(cmd, g, res, start.Add(waitFor)); err != nil {
					return err
				}
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), res)
			}
			state := "splitting (recorded; the new shard forms in the background)"
			if res.Done {
				state = fmt.Sprintf("split in %s", time.Since(start).Round(time.Millisecond))
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "shard %d: %s; shard %d keeps %s..%s, shard %d owns %s..%s of bucket %d\n",
				res.Shard, state, res.Shard, res.Range.First, res.Range.Last, res.Child, res.ChildRange.First,
				res.ChildRange.Last, res.Range.Bucket)
			return err
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", true, "wait until the new shard serves its users")
	cmd.Flags().DurationVar(&waitFor, "wait-timeout", 5*time.Minute, "give up waiting after this long")
	return cmd
}

// waitSplit polls cluster status until the split of res is done.
func waitSplit(cmd *cobra.Command, g *globals, res apiv1.SplitResponse, deadline time.Time) (apiv1.SplitResponse, error) {
	c, err := g.client()
	if err != nil {
		return res, err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "splitting shard %d into %d…\n", res.Shard, res.Child)
	for {
		st, err := c.ClusterStatus(cmd.Context())
		if err != nil {
			return res, fmt.Errorf("shard split %d: %w", res.Shard, err)
		}
		if st.Split == nil || st.Split.Child != res.Child {
			res.Done, res.Shards, res.MapVersion = true, len(st.Shards), st.MapVersion
			return res, nil
		}
		if time.Now().After(deadline) {
			return res, fmt.Errorf("shard split %d: shard %d has not formed yet; see memctl cluster status", res.Shard, res.Child)
		}
		select {
		case <-cmd.Context().Done():
			return res, cmd.Context().Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
