package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/eval"
	"github.com/memcluster/memcluster/memory"
)

// Eval longmemeval tuning.
const (
	// lmeTurnsPerK: each search returns this many turns per session wanted, so the top-k distinct sessions
	// are usually all present (sessions hold several turns each).
	lmeTurnsPerK = 10
	// lmeProgressEvery spaces the progress lines on stderr, in questions.
	lmeProgressEvery = 25
)

func newEvalLongMemEvalCmd(g *globals) *cobra.Command {
	o := &evalOptions{}
	cmd := &cobra.Command{
		Use:   "longmemeval --file PATH [flags]",
		Short: "Session-level recall_any@k and recall_all@k on LongMemEval",
		Long: `Session-level recall_any@k and recall_all@k on LongMemEval.

The file is streamed one question at a time, so the ~250 MB S and M files need
little memory. Each question gets a fresh user: its haystack sessions are put
in time order with batch puts, every turn an episodic memory "role: content"
(cut to 32 KiB) occurred at its session's date (read as UTC), with session_id,
role and turn in its metadata. The question is searched with
k = min(1000, 10 × the largest --k) turns and min_score 0; the ranked turns
give the ranked distinct sessions. recall_any@k is 1 when any answer session is
among the top k sessions, recall_all@k when all are; both are averaged per
question_type and overall. Abstention questions (_abs) are skipped. The user's
memories are deleted after its question unless --keep.`,
		Example: `  memctl eval longmemeval --file ../shared/data/longmemeval/longmemeval-format-sample.json
  memctl eval longmemeval --file longmemeval_s.json --mode bm25 --questions 50 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			mode, ks, err := o.validate()
			if err != nil {
				return err
			}
			f, err := os.Open(o.file)
			if err != nil {
				return err
			}
			defer f.Close()
			s := newEvalSettings(g, "longmemeval", o, mode, ks, min(eval.MaxK, lmeTurnsPerK*ks[len(ks)-1]))
			s.Memories = fmt.Sprintf(`one episodic memory per turn: text "role: content" cut to %d bytes; occurred_at = session date (UTC); `+
				`metadata session_id, role, turn; one user per question; sessions ranked by their best turn`, memory.DefaultLimits.MaxTextBytes)
			r, err := newEvalRunner(g, s)
			if err != nil {
				return err
			}
			rep, err := runLongMemEval(cmd.Context(), r, s, f, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), rep)
			}
			return printLongMemEvalReport(cmd.OutOrStdout(), rep)
		},
	}
	o.addFlags(cmd.Flags(), "ask at most this many questions, in file order; 0 for all")
	return cmd
}

// lmeReport is the result of eval longmemeval.
type lmeReport struct {
	Settings      evalSettings `json:"settings"`
	Counts        lmeCounts    `json:"counts"`
	Overall       lmeRow       `json:"overall"`
	PerType       []lmeRow     `json:"per_question_type"`
	IngestSeconds float64      `json:"ingest_seconds"`
	Queries       int          `json:"queries"`
	QueryP50Ms    float64      `json:"query_p50_ms"`
	QueryP99Ms    float64      `json:"query_p99_ms"`
	// SearchableP50Ms: the median time from a question's haystack being acknowledged to its first search
	// answering (the full-text index taking the haystack); the queries above are timed after it.
	SearchableP50Ms float64     `json:"searchable_p50_ms"`
	Cleanup         evalCleanup `json:"cleanup"`
}

type lmeCounts struct {
	QuestionsRead     int `json:"questions_read"`
	Asked             int `json:"asked"`
	SkippedAbstention int `json:"skipped_abstention"`
	// SkippedNoAnswer counts questions none of whose answer sessions is in the haystack.
	SkippedNoAnswer int `json:"skipped_no_answer_session"`
	Sessions        int `json:"sessions"`
	Memories        int `json:"memories"`
	TurnsEmpty      int `json:"turns_empty_skipped"`
	TurnsCut        int `json:"turns_cut"`
}

type lmeRow struct {
	Group     string       `json:"group"`
	Questions int          `json:"questions"`
	RecallAny []evalRecall `json:"recall_any"` // null when the group has no questions
	RecallAll []evalRecall `json:"recall_all"`
}

const lmeOverall = "overall"

func runLongMemEval(ctx context.Context, r *evalRunner, s evalSettings, in io.Reader, progress io.Writer) (lmeReport, error) {
	rep := lmeReport{Settings: s, Cleanup: evalCleanup{Kept: s.Keep, Note: evalCleanupNote}}
	anyM, allM := eval.NewMeans(len(s.K)), eval.NewMeans(len(s.K))
	var types []string
	err := eval.StreamLongMemEval(in, func(q *eval.LongMemEvalQuestion) error {
		if s.QuestionsLimit > 0 && rep.Counts.Asked >= s.QuestionsLimit {
			return eval.StopStream
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rep.Counts.QuestionsRead++
		if q.Abstention() {
			rep.Counts.SkippedAbstention++
			return nil
		}
		ranked, gold, err := runLongMemEvalQuestion(ctx, r, s, q, &rep.Counts)
		if err != nil {
			return fmt.Errorf("question %s: %w", q.QuestionID, err)
		}
		if gold == nil {
			rep.Counts.SkippedNoAnswer++
			return nil
		}
		rep.Counts.Asked++
		if !slices.Contains(types, q.QuestionType) {
			types = append(types, q.QuestionType)
		}
		anyM.Add(eval.RecallAnyAtKs(gold, ranked, s.K), lmeOverall, q.QuestionType)
		allM.Add(eval.RecallAllAtKs(gold, ranked, s.K), lmeOverall, q.QuestionType)
		if rep.Counts.Asked%lmeProgressEvery == 0 {
			_, m := anyM.Mean(lmeOverall)
			fmt.Fprintf(progress, "eval longmemeval: %d questions asked, recall_any %s\n", rep.Counts.Asked,
				fmtRecallLine(s.K, m))
		}
		return nil
	})
	if err != nil {
		return rep, err
	}
	row := func(group string) lmeRow {
		n, a := anyM.Mean(group)
		_, l := allM.Mean(group)
		return lmeRow{Group: group, Questions: n, RecallAny: evalRecalls(s.K, a), RecallAll: evalRecalls(s.K, l)}
	}
	rep.Overall = row(lmeOverall)
	slices.Sort(types)
	rep.PerType = []lmeRow{}
	for _, t := range types {
		rep.PerType = append(rep.PerType, row(t))
	}
	rep.IngestSeconds = r.ingest.Seconds()
	rep.Queries, rep.QueryP50Ms, rep.QueryP99Ms = r.latency()
	rep.SearchableP50Ms = r.settledP50()
	rep.Cleanup.Deleted = r.deleted
	rep.Counts.Memories = r.ingested
	return rep, nil
}

// runLongMemEvalQuestion ingests one question's haystack into a fresh user, asks the question and returns the
// sessions of the ranked turns and the answer sessions present in the haystack (nil: none is, nothing asked).
func runLongMemEvalQuestion(ctx context.Context, r *evalRunner, s evalSettings, q *eval.LongMemEvalQuestion,
	counts *lmeCounts) (ranked, gold []string, err error) {
	sessions, err := q.Sessions()
	if err != nil {
		return nil, nil, err
	}
	present := map[string]bool{}
	for _, ss := range sessions {
		present[ss.ID] = true
	}
	for _, id := range q.AnswerSessionIDs {
		if present[id] && !slices.Contains(gold, id) {
			gold = append(gold, id)
		}
	}
	if gold == nil {
		return nil, nil, nil
	}
	user := s.UserPrefix + q.QuestionID
	var reqs []apiv1.PutRequest
	for _, ss := range sessions {
		counts.Sessions++
		for i, t := range ss.Turns {
			if strings.TrimSpace(t.Content) == "" {
				counts.TurnsEmpty++
				continue
			}
			text, cut := cutText(t.Role+": "+t.Content, memory.DefaultLimits.MaxTextBytes)
			if cut {
				counts.TurnsCut++
			}
			reqs = append(reqs, apiv1.PutRequest{
				UserID: user, Type: string(memory.Episodic), Text: text, OccurredAt: new(ss.Time),
				Metadata: map[string]string{"session_id": ss.ID, "role": t.Role, "turn": strconv.Itoa(i)},
			})
		}
	}
	ids, err := r.put(ctx, reqs)
	if !s.Keep {
		defer func() { err = evalJoin(err, r.remove(ctx, user, ids)) }()
	}
	if err != nil {
		return nil, nil, err
	}
	sess := make(map[string]string, len(ids))
	for i, id := range ids {
		sess[id] = reqs[i].Metadata["session_id"]
	}
	asked, err := q.AskedAt()
	if err != nil {
		return nil, nil, err
	}
	if err := r.settle(ctx, user); err != nil {
		return nil, nil, err
	}
	results, err := r.search(ctx, user, q.Question, asked)
	if err != nil {
		return nil, nil, err
	}
	for _, res := range results {
		if v, ok := sess[res.ID]; ok {
			ranked = append(ranked, v)
		} else {
			ranked = append(ranked, res.Metadata["session_id"])
		}
	}
	return ranked, gold, nil
}

func printLongMemEvalReport(w io.Writer, rep lmeReport) error {
	s, c := rep.Settings, rep.Counts
	fmt.Fprintf(w, "LongMemEval session recall  file %s  mode %s\n", s.File, modeLabel(s))
	fmt.Fprintf(w, "questions read %d: %d asked, %d abstention skipped, %d without an answer session in the haystack; "+
		"sessions %d, memories %d (%d empty turns skipped, %d cut); %d turns searched per question\n\n",
		c.QuestionsRead, c.Asked, c.SkippedAbstention, c.SkippedNoAnswer, c.Sessions, c.Memories, c.TurnsEmpty, c.TurnsCut, s.SearchK)
	tw := newTable(w)
	fmt.Fprintf(tw, "QUESTION TYPE\tQUESTIONS\t%s\t%s\n", strings.Join(fmtKHeader("ANY", s.K), "\t"),
		strings.Join(fmtKHeader("ALL", s.K), "\t"))
	line := func(r lmeRow) {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", r.Group, r.Questions, strings.Join(fmtRecalls(s.K, r.RecallAny), "\t"),
			strings.Join(fmtRecalls(s.K, r.RecallAll), "\t"))
	}
	for _, r := range rep.PerType {
		line(r)
	}
	line(rep.Overall)
	if err := tw.Flush(); err != nil {
		return err
	}
	printEvalFooter(w, s, c.Memories, rep.IngestSeconds, rep.Queries, rep.QueryP50Ms, rep.QueryP99Ms, rep.Cleanup)
	_, err := fmt.Fprintf(w, "searchable: p50 %.1f ms from a haystack's last put to its first search's answer (untimed above)\n",
		rep.SearchableP50Ms)
	return err
}
