package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/eval"
	"github.com/memcluster/memcluster/memory"
)

// searchTextWidth keeps a result row within a ~140-column terminal.
const searchTextWidth = 60

type searchOptions struct {
	user, agent, run string
	types, tags      []string
	k                int
	since, until     string
	now              string
	minScore         float64
	halfLife         string
	stale            bool
	allUsers         bool
	shardTimeout     time.Duration
	mode             string
}

func newSearchCmd(g *globals) *cobra.Command {
	o := &searchOptions{}
	cmd := &cobra.Command{
		Use:   "search (--user U | --agent A | --all-users) [flags] QUERY... | -",
		Short: "Search a user's memories, or fan out across users, best first",
		Long: `Search one user's memories (--user), or, without --user, every user the token may see: --agent A (that
agent's memories), --run R, or --all-users (an operator's search). A query across users goes to every shard,
each under --shard-timeout; shards that miss it are named in the answer ("partial"), never silently dropped.`,
		Example: `  memctl search --user alice --k 3 "what does alice drink"
  memctl search --user alice --mode bm25 "tea"
  memctl search --user alice --type semantic --since 2025-01-01T00:00:00Z -o json tea
  memctl search --agent support-bot --k 10 "refund"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := o.request(cmd.Flags(), args, cmd.InOrStdin())
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			resp, err := c.Search(cmd.Context(), req)
			if err != nil {
				return fmt.Errorf("search: %w", err)
			}
			if resp.Results == nil {
				resp.Results = []apiv1.SearchResult{} // print [] rather than null
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), resp)
			}
			warnMissing(cmd.ErrOrStderr(), resp.MissingShards)
			return printResults(cmd.OutOrStdout(), resp.Results, o.user == "")
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

func (o *searchOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.user, "user", "", "user id; without it, search across users (needs --agent, --run or --all-users)")
	f.BoolVar(&o.allUsers, "all-users", false, "search across every user the token may see")
	f.DurationVar(&o.shardTimeout, "shard-timeout", 0, "per-shard deadline of a search across users (server default: 2s)")
	f.IntVar(&o.k, "k", 0, "max results, 1..1000 (server default: 6)")
	f.StringArrayVar(&o.types, "type", nil, "only this type; repeat for more")
	f.StringVar(&o.agent, "agent", "", "only this agent's memories")
	f.StringVar(&o.run, "run", "", "only this run's memories")
	f.StringArrayVar(&o.tags, "tag", nil, "only memories carrying this tag; repeat to require more")
	f.StringVar(&o.since, "since", "", "only memories that occurred at or after, RFC 3339")
	f.StringVar(&o.until, "until", "", "only memories that occurred before, RFC 3339")
	f.StringVar(&o.now, "now", "", `when the question is asked, RFC 3339: "last week" and recency count from it (default: the node's clock)`)
	f.StringVar(&o.mode, "mode", "", "search mode: pipeline (server default for one user), hybrid (vector 0.7, text 0.3; the only mode across users), bm25 or vector (hybrid with one side only)")
	f.Float64Var(&o.minScore, "min-score", 0, "drop results scoring below (server default: 0.35; 0 keeps all)")
	f.StringVar(&o.halfLife, "recency-half-life", "", `turn on recency decay with this half-life, e.g. "720h"`)
	f.BoolVar(&o.stale, "stale", false, "let followers answer from their replicas without asking the leader")
}

// request validates the flags locally and builds the SearchRequest. Optional
// values are sent only when their flag was given, so server defaults apply.
func (o *searchOptions) request(fs *pflag.FlagSet, args []string, in io.Reader) (apiv1.SearchRequest, error) {
	var zero apiv1.SearchRequest
	switch {
	case o.user != "" && o.allUsers:
		return zero, errors.New("--all-users and --user exclude each other")
	case o.user == "" && !o.allUsers && o.agent == "" && o.run == "":
		return zero, errors.New("--user is required (or --agent, --run or --all-users to search across users)")
	case o.user != "" && o.shardTimeout != 0:
		return zero, errors.New("--shard-timeout applies to a search across users only (drop --user)")
	case o.shardTimeout < 0:
		return zero, fmt.Errorf("--shard-timeout %s: must be positive", o.shardTimeout)
	}
	query, err := textArg(args, in, "QUERY")
	if err != nil {
		return zero, err
	}
	req := apiv1.SearchRequest{
		UserID: o.user, Query: query, AgentID: o.agent, RunID: o.run,
		Tags: o.tags, Stale: o.stale,
	}
	if o.shardTimeout > 0 {
		req.ShardTimeout = o.shardTimeout.String()
	}
	if o.mode != "" {
		m, err := eval.ParseMode(o.mode)
		if err != nil {
			return zero, fmt.Errorf("--mode: %w", err)
		}
		req.Mode = m.SearchMode()
		if m == eval.ModeBM25 || m == eval.ModeVector {
			vw, tw := m.Weights()
			req.VectorWeight, req.TextWeight = &vw, &tw
		}
	}
	if fs.Changed("k") {
		if o.k < 1 || o.k > 1000 {
			return zero, fmt.Errorf("--k %d: must be between 1 and 1000", o.k)
		}
		req.K = o.k
	}
	for _, t := range o.types {
		// ParseType maps "" to episodic; an empty --type is a mistake here.
		if _, err := memory.ParseType(t); err != nil || t == "" {
			return zero, fmt.Errorf("--type %q: want working, episodic, semantic or perceptual", t)
		}
	}
	req.Types = o.types
	if o.now != "" {
		t, err := parseTime("now", o.now)
		if err != nil {
			return zero, err
		}
		req.Now = &t
	}
	if o.since != "" {
		t, err := parseTime("since", o.since)
		if err != nil {
			return zero, err
		}
		req.From = &t
	}
	if o.until != "" {
		t, err := parseTime("until", o.until)
		if err != nil {
			return zero, err
		}
		req.To = &t
	}
	if req.From != nil && req.To != nil && !req.To.After(*req.From) {
		return zero, fmt.Errorf("--until %s is not after --since %s", o.until, o.since)
	}
	if fs.Changed("min-score") {
		ms := o.minScore
		req.MinScore = &ms
	}
	if o.halfLife != "" {
		d, err := time.ParseDuration(o.halfLife)
		if err != nil || d <= 0 {
			return zero, fmt.Errorf("--recency-half-life %q: want a positive duration like 720h", o.halfLife)
		}
		req.RecencyHalfLife = o.halfLife
	}
	return req, nil
}

// printResults writes one row per hit. The recency column appears only when
// decay changed some score, to keep the common table narrow; the user column only across users.
func printResults(w io.Writer, rs []apiv1.SearchResult, users bool) error {
	if len(rs) == 0 {
		_, err := fmt.Fprintln(w, "no results")
		return err
	}
	decay := false
	for _, r := range rs {
		if r.Recency != 0 && r.Recency != 1 {
			decay = true
		}
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	tw := newTable(w)
	head := "RANK\tSCORE\tVECTOR\tTEXT_SCORE\t"
	if decay {
		head += "RECENCY\t"
	}
	if users {
		head += "USER\t"
	}
	fmt.Fprintln(tw, head+"ID\tTYPE\tOCCURRED\tTEXT")
	for i, r := range rs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t", i+1, f(r.Score), f(r.VectorScore), f(r.TextScore))
		if decay {
			fmt.Fprintf(tw, "%s\t", f(r.Recency))
		}
		if users {
			fmt.Fprintf(tw, "%s\t", r.UserID)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, r.Type, fmtTime(r.OccurredAt), oneLine(r.Text, searchTextWidth))
	}
	return tw.Flush()
}
