package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/client"
	"github.com/memcluster/memcluster/eval"
)

// Eval limits and defaults.
const (
	// evalBatchBytes bounds the JSON body of one batch put, well under the server's 1 MiB default.
	evalBatchBytes = 512 << 10
	// evalBatchMax bounds the memories of one batch put.
	evalBatchMax = 500
	// evalAttempts is how often a request answered 503 (a shard without a leader) is tried.
	evalAttempts = 8
	// evalDeleteWorkers delete memories concurrently when cleaning up.
	evalDeleteWorkers = 4
	// evalCleanupNote says how users are removed.
	evalCleanupNote = "each eval user is forgotten with DELETE /v1/users/{user_id}"
)

var evalDefaultKs = []int{1, 5, 10, 20}

func newEvalCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Measure retrieval quality on a public benchmark against a running cluster",
		Long: `Measure retrieval quality on a public benchmark against a running cluster.

Each subcommand loads a dataset file, ingests it into fresh users (named
eval-<benchmark>-<run id>-…), asks every question through POST /v1/search with
min_score 0 so recall is measured on the ranking, reports recall, ingest time
and query latency, and deletes the users' memories unless --keep is given.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unknown command %q for \"memctl eval\"", args[0])
			}
			return errors.New(`missing subcommand (try "memctl eval locomo" or "memctl eval longmemeval")`)
		},
	}
	cmd.AddCommand(newEvalLoCoMoCmd(g), newEvalLongMemEvalCmd(g))
	return cmd
}

// evalOptions are the flags every eval subcommand shares.
type evalOptions struct {
	file      string
	ks        []int
	mode      string
	keep      bool
	questions int
	// askedAt sends each question's own date as the search's now.
	askedAt bool
}

func (o *evalOptions) addFlags(f *pflag.FlagSet, questionsHelp string) {
	f.StringVar(&o.file, "file", "", "dataset file (required)")
	f.IntSliceVar(&o.ks, "k", evalDefaultKs, "cut-offs to report recall at, comma-separated, each 1..1000")
	f.StringVar(&o.mode, "mode", string(eval.ModePipeline), "search mode: pipeline (the server's default search mode), hybrid (vector 0.7, text 0.3), bm25 or vector")
	f.BoolVar(&o.keep, "keep", false, "keep the ingested users instead of deleting their memories")
	f.IntVar(&o.questions, "questions", 0, questionsHelp)
	f.BoolVar(&o.askedAt, "question-date", true, "send each question's own date as the search's now, so \"last week\" means the week before it was asked (false: the server's clock)")
}

// validate checks the shared flags and returns the mode and the sorted k list.
func (o *evalOptions) validate() (eval.Mode, []int, error) {
	if o.file == "" {
		return "", nil, errors.New("--file is required")
	}
	mode, err := eval.ParseMode(o.mode)
	if err != nil {
		return "", nil, fmt.Errorf("--mode: %w", err)
	}
	ks, err := eval.NormalizeKs(o.ks)
	if err != nil {
		return "", nil, fmt.Errorf("--k: %w", err)
	}
	if o.questions < 0 {
		return "", nil, fmt.Errorf("--questions %d is negative", o.questions)
	}
	return mode, ks, nil
}

// evalSettings records everything behind a report's figures.
type evalSettings struct {
	Benchmark    string  `json:"benchmark"`
	File         string  `json:"file"`
	Addr         string  `json:"addr"`
	Mode         string  `json:"mode"`
	ModeNote     string  `json:"mode_note,omitempty"`
	VectorWeight float64 `json:"vector_weight"`
	TextWeight   float64 `json:"text_weight"`
	K            []int   `json:"k"`
	// SearchK is the k sent with each search: results per question.
	SearchK  int     `json:"search_k"`
	MinScore float64 `json:"min_score"`
	// QuestionsLimit is --questions, 0 for every question.
	QuestionsLimit int      `json:"questions_limit"`
	Conversations  []string `json:"conversations,omitempty"`
	RunID          string   `json:"run_id"`
	UserPrefix     string   `json:"user_prefix"`
	Keep           bool     `json:"keep"`
	// QuestionDate: each search carries the question's date as its now.
	QuestionDate bool `json:"question_date"`
	// Memories says how dataset turns become memories.
	Memories string `json:"memories"`
	// Latency says what the query latencies measure.
	Latency string `json:"latency"`
}

func newEvalSettings(g *globals, benchmark string, o *evalOptions, mode eval.Mode, ks []int, searchK int) evalSettings {
	vw, tw := mode.Weights()
	runID := benchRunID()
	return evalSettings{
		Benchmark: benchmark, File: o.file, Addr: g.addr, Mode: string(mode), ModeNote: mode.Note(),
		VectorWeight: vw, TextWeight: tw, K: ks, SearchK: searchK, MinScore: 0, QuestionsLimit: o.questions,
		RunID: runID, UserPrefix: "eval-" + benchmark + "-" + runID + "-", Keep: o.keep, QuestionDate: o.askedAt,
		Latency: "client-side wall time of each POST /v1/search, one query at a time",
	}
}

// evalRecall is recall at each k of the settings, in the same order.
type evalRecall struct {
	K     int     `json:"k"`
	Value float64 `json:"value"`
}

func evalRecalls(ks []int, means []float64) []evalRecall {
	if means == nil {
		return nil
	}
	out := make([]evalRecall, len(ks))
	for i, k := range ks {
		out[i] = evalRecall{K: k, Value: means[i]}
	}
	return out
}

// evalCleanup says what happened to the ingested users.
type evalCleanup struct {
	Kept    bool   `json:"kept"`
	Deleted int    `json:"deleted"`
	Note    string `json:"note"`
}

// evalRunner talks to the cluster for one eval run and keeps its timings.
type evalRunner struct {
	c        *client.Client
	vw, tw   float64
	mode     string // server search mode
	searchK  int
	askedAt  bool // send the question's date as now
	ingest   time.Duration
	ingested int
	lat      []time.Duration
	settled  []time.Duration // settle searches: how long a user's memories took to become searchable
	deleted  int
}

func newEvalRunner(g *globals, s evalSettings) (*evalRunner, error) {
	c, err := g.client()
	if err != nil {
		return nil, err
	}
	return &evalRunner{c: c, vw: s.VectorWeight, tw: s.TextWeight, mode: eval.Mode(s.Mode).SearchMode(), searchK: s.SearchK,
		askedAt: s.QuestionDate}, nil
}

// evalRetry runs f until it succeeds, fails with something other than 503, or evalAttempts are used up.
func evalRetry(ctx context.Context, f func() error) error {
	var err error
	for attempt := 1; ; attempt++ {
		err = f()
		ae, ok := errors.AsType[*client.APIError](err)
		if err == nil || !ok || ae.Status != http.StatusServiceUnavailable || attempt == evalAttempts {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt) * 250 * time.Millisecond):
		}
	}
}

// put stores reqs (memories of one user) in batches bounded by count and body size and returns the ids in
// request order. The time spent is added to the ingest time.
func (r *evalRunner) put(ctx context.Context, reqs []apiv1.PutRequest) ([]string, error) {
	ids := make([]string, 0, len(reqs))
	start := time.Now()
	defer func() { r.ingest += time.Since(start) }()
	for len(reqs) > 0 {
		n, size := 0, 0
		for n < len(reqs) && n < evalBatchMax {
			b, err := json.Marshal(reqs[n])
			if err != nil {
				return ids, err
			}
			if n > 0 && size+len(b)+1 > evalBatchBytes {
				break
			}
			size += len(b) + 1
			n++
		}
		var got []string
		err := evalRetry(ctx, func() error {
			ms, err := r.c.PutBatch(ctx, reqs[:n])
			if err != nil {
				return err
			}
			if len(ms) != n {
				return fmt.Errorf("batch put: %d memories stored of %d", len(ms), n)
			}
			got = got[:0]
			for _, m := range ms {
				got = append(got, m.ID)
			}
			return nil
		})
		if err != nil {
			return ids, fmt.Errorf("batch put: %w", err)
		}
		ids = append(ids, got...)
		r.ingested += n
		reqs = reqs[n:]
	}
	return ids, nil
}

// search asks one question of user, asked at the time asked (sent when the run passes question dates), and
// records its latency.
func (r *evalRunner) search(ctx context.Context, user, query string, asked time.Time) ([]apiv1.SearchResult, error) {
	req := apiv1.SearchRequest{UserID: user, Query: query, K: r.searchK, MinScore: new(0.0),
		VectorWeight: new(r.vw), TextWeight: new(r.tw), Mode: r.mode}
	if r.askedAt && !asked.IsZero() {
		req.Now = &asked
	}
	var resp apiv1.SearchResponse
	err := evalRetry(ctx, func() error {
		start := time.Now()
		var err error
		resp, err = r.c.Search(ctx, req)
		if err == nil {
			r.lat = append(r.lat, time.Since(start))
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return resp.Results, nil
}

// remove forgets the eval user: one DELETE /v1/users/{user_id}, atomic on the user's shard (ids are unused
// but kept for the count when the server removed fewer). It runs even when ctx is cancelled (Ctrl-C), so an
// interrupted run still cleans up.
func (r *evalRunner) remove(ctx context.Context, user string, ids []string) error {
	ctx = context.WithoutCancel(ctx)
	var n int
	err := evalRetry(ctx, func() error {
		var err error
		n, err = r.c.DeleteUser(ctx, user)
		return err
	})
	if err != nil {
		return fmt.Errorf("forget %s: %w", user, err)
	}
	r.deleted += max(n, 0)
	_ = ids
	return nil
}

// settle makes one untimed-for-the-report search (k = 1) for user right after its memories were put: a search
// sees every acknowledged write, so it waits until the full-text index holds them. The query latency measured
// afterwards is then the search's own, not the indexing of a haystack put a moment before; how long the user
// took to become searchable is kept apart (settledP50).
func (r *evalRunner) settle(ctx context.Context, user string) error {
	req := apiv1.SearchRequest{UserID: user, Query: "settle", K: 1, MinScore: new(0.0), Mode: r.mode}
	return evalRetry(ctx, func() error {
		start := time.Now()
		if _, err := r.c.Search(ctx, req); err != nil {
			return fmt.Errorf("settle search: %w", err)
		}
		r.settled = append(r.settled, time.Since(start))
		return nil
	})
}

// settledP50 is the median settle search in milliseconds.
func (r *evalRunner) settledP50() float64 {
	return float64(eval.Percentile(r.settled, 50).Microseconds()) / 1000
}

// latency returns the count, p50 and p99 of the recorded searches in milliseconds.
func (r *evalRunner) latency() (n int, p50, p99 float64) {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return len(r.lat), ms(eval.Percentile(r.lat, 50)), ms(eval.Percentile(r.lat, 99))
}

// cutText shortens s to at most n bytes without splitting a UTF-8 sequence.
func cutText(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// fmtRecalls prints recall values for a table row, "-" for a group without questions.
func fmtRecalls(ks []int, rs []evalRecall) []string {
	out := make([]string, len(ks))
	for i := range ks {
		if rs == nil {
			out[i] = "-"
		} else {
			out[i] = fmt.Sprintf("%.3f", rs[i].Value)
		}
	}
	return out
}

// fmtKHeader is "R@1\tR@5…" with the given prefix.
func fmtKHeader(prefix string, ks []int) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = fmt.Sprintf("%s@%d", prefix, k)
	}
	return out
}

// printEvalFooter prints the timing and cleanup lines shared by the eval tables.
func printEvalFooter(w io.Writer, s evalSettings, memories int, ingestS float64, queries int, p50, p99 float64, c evalCleanup) {
	rate := 0.0
	if ingestS > 0 {
		rate = float64(memories) / ingestS
	}
	fmt.Fprintf(w, "\ningest: %d memories in %.2fs (%.0f/s)\n", memories, ingestS, rate)
	fmt.Fprintf(w, "query: %d searches, p50 %.1f ms, p99 %.1f ms (k %d, min_score 0)\n", queries, p50, p99, s.SearchK)
	if c.Kept {
		fmt.Fprintf(w, "users kept: %s*\n", s.UserPrefix)
	} else {
		fmt.Fprintf(w, "cleanup: %d memories deleted (%s)\n", c.Deleted, c.Note)
	}
	if s.ModeNote != "" {
		fmt.Fprintf(w, "note: %s\n", s.ModeNote)
	}
}

// modeLabel is "hybrid (vector 0.7, text 0.3)".
func modeLabel(s evalSettings) string {
	return fmt.Sprintf("%s (vector %.1f, text %.1f)", s.Mode, s.VectorWeight, s.TextWeight)
}

// evalJoin joins the errors that happened, nil when none did.
func evalJoin(errs ...error) error {
	errs = slices.DeleteFunc(errs, func(e error) bool { return e == nil })
	if len(errs) == 0 {
		return nil
	}
	return errors.Join(errs...)
}
