package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/eval"
	"github.com/memcluster/memcluster/memory"
)

type evalLoCoMoOptions struct {
	evalOptions
	conversations []string
	captions      bool
	speaker       string
}

// Where eval locomo puts a turn's speaker.
const (
	speakerInText   = "text"   // "Speaker: text"
	speakerInEntity = "entity" // entities: [Speaker]; BM25 sees the name, the embedding does not
)

func newEvalLoCoMoCmd(g *globals) *cobra.Command {
	o := &evalLoCoMoOptions{}
	cmd := &cobra.Command{
		Use:   "locomo --file PATH [flags]",
		Short: "Evidence recall@k on LoCoMo conversations",
		Long: `Evidence recall@k on LoCoMo conversations.

Each conversation is ingested into a fresh user with batch puts: every turn
becomes an episodic memory "Speaker: text" (plus " [image: caption]" when the
turn shares an image, unless --captions=false), occurred at its session's date
(read as UTC), with dia_id, speaker and session in its metadata. With
--speaker entity the text has no "Speaker: " prefix and the speaker is the
memory's entity instead: BM25 still matches the name (entities are indexed as
extra text tokens), the embedding no longer sees it. Each question
is then searched with k = the largest --k and min_score 0, the hits are mapped
back to dia_ids, and recall@k = |evidence ∩ top-k| / |evidence| is averaged
per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop) and over
categories 1-4; category 5 (adversarial) is reported apart.

Malformed evidence ids are repaired ("D8:6; D9:17" is two ids, "D:11:26" is
D11:26, "D30:05" is D30:5); ids matching no turn are dropped, and questions
left without evidence are skipped.`,
		Example: `  memctl eval locomo --file ../shared/data/locomo/locomo-dev.json
  memctl eval locomo --file locomo10.json --mode bm25 --k 5,10 -o json
  memctl eval locomo --file locomo10.json --conversations conv-26 --questions 20 --keep`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			mode, ks, err := o.validate()
			if err != nil {
				return err
			}
			if o.speaker != speakerInText && o.speaker != speakerInEntity {
				return fmt.Errorf("--speaker %q: want text or entity", o.speaker)
			}
			samples, err := eval.LoadLoCoMoFile(o.file)
			if err != nil {
				return err
			}
			samples, err = selectConversations(samples, o.conversations)
			if err != nil {
				return err
			}
			s := newEvalSettings(g, "locomo", &o.evalOptions, mode, ks, ks[len(ks)-1])
			s.Conversations = o.conversations
			format := eval.TurnFormat{Speaker: o.speaker == speakerInText, Captions: o.captions}
			s.Memories = `one episodic memory per turn: text "text"`
			if format.Speaker {
				s.Memories = `one episodic memory per turn: text "Speaker: text"`
			}
			if o.captions {
				s.Memories += ` + " [image: caption]" for shared images`
			}
			if !format.Speaker {
				s.Memories += `; entities [Speaker]`
			}
			s.Memories += `; occurred_at = session date (UTC); metadata dia_id, speaker, session; one user per conversation`
			r, err := newEvalRunner(g, s)
			if err != nil {
				return err
			}
			rep, err := runLoCoMo(cmd.Context(), r, s, samples, format, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), rep)
			}
			return printLoCoMoReport(cmd.OutOrStdout(), rep)
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

func (o *evalLoCoMoOptions) addFlags(f *pflag.FlagSet) {
	o.evalOptions.addFlags(f, "ask at most this many questions of each conversation, in file order; 0 for all")
	f.StringSliceVar(&o.conversations, "conversations", nil, "only these sample ids, comma-separated (default: all)")
	f.BoolVar(&o.captions, "captions", true, `append " [image: caption]" to turns that share an image`)
	f.StringVar(&o.speaker, "speaker", speakerInText, `where the speaker goes: text ("Speaker: text") or entity (the memory's entities)`)
}

// selectConversations keeps the samples named in ids, in file order; all of them when ids is empty.
func selectConversations(samples []eval.LoCoMoSample, ids []string) ([]eval.LoCoMoSample, error) {
	if len(ids) == 0 {
		return samples, nil
	}
	var out []eval.LoCoMoSample
	for _, id := range ids {
		if !slices.ContainsFunc(samples, func(s eval.LoCoMoSample) bool { return s.ID == id }) {
			return nil, fmt.Errorf("--conversations: no conversation %q in the file", id)
		}
	}
	for _, s := range samples {
		if slices.Contains(ids, s.ID) {
			out = append(out, s)
		}
	}
	return out, nil
}

// locomoReport is the result of eval locomo.
type locomoReport struct {
	Settings evalSettings `json:"settings"`
	Counts   locomoCounts `json:"counts"`
	// Overall covers categories 1-4.
	Overall     locomoRow   `json:"overall"`
	PerCategory []locomoRow `json:"per_category"`
	// Category5 (adversarial) is kept out of Overall.
	Category5 locomoRow `json:"category_5"`
	// PerConversation covers categories 1-4 of each conversation.
	PerConversation []locomoRow `json:"per_conversation"`
	IngestSeconds   float64     `json:"ingest_seconds"`
	Queries         int         `json:"queries"`
	QueryP50Ms      float64     `json:"query_p50_ms"`
	QueryP99Ms      float64     `json:"query_p99_ms"`
	Cleanup         evalCleanup `json:"cleanup"`
}

type locomoCounts struct {
	Conversations int `json:"conversations"`
	Memories      int `json:"memories"` // turns ingested
	// QuestionsInFile counts the questions of the selected conversations.
	QuestionsInFile   int `json:"questions_in_file"`
	Asked             int `json:"asked"`
	SkippedNoEvidence int `json:"skipped_no_evidence"`
	NotAskedLimit     int `json:"not_asked_limit"` // beyond --questions
	// EvidenceRepaired counts evidence entries that were not a plain dia_id but held one or more after
	// repair; EvidenceDropped the ids that matched no turn and the pieces that are no dia_id at all.
	EvidenceRepaired int `json:"evidence_entries_repaired"`
	EvidenceDropped  int `json:"evidence_ids_dropped"`
}

type locomoRow struct {
	Group     string       `json:"group"`
	Category  int          `json:"category,omitempty"`
	Questions int          `json:"questions"`
	Recall    []evalRecall `json:"recall"` // null when the group has no questions
}

func locomoCatGroup(c int) string      { return "category " + strconv.Itoa(c) }
func locomoConvGroup(id string) string { return "conversation " + id }

const locomoOverall = "overall"

// runLoCoMo ingests, questions and cleans up each conversation in turn.
func runLoCoMo(ctx context.Context, r *evalRunner, s evalSettings, samples []eval.LoCoMoSample, format eval.TurnFormat,
	progress io.Writer) (locomoReport, error) {
	ks := s.K
	means := eval.NewMeans(len(ks))
	rep := locomoReport{Settings: s, Cleanup: evalCleanup{Kept: s.Keep, Note: evalCleanupNote}}
	for _, sample := range samples {
		if err := runLoCoMoConversation(ctx, r, s, sample, format, means, &rep.Counts, progress); err != nil {
			return rep, err
		}
		rep.Counts.Conversations++
	}
	row := func(group string, cat int) locomoRow {
		n, m := means.Mean(group)
		return locomoRow{Group: group, Category: cat, Questions: n, Recall: evalRecalls(ks, m)}
	}
	rep.Overall = row(locomoOverall, 0)
	for c := eval.CategoryMultiHop; c <= eval.CategorySingleHop; c++ {
		rep.PerCategory = append(rep.PerCategory, row(locomoCatGroup(c), c))
	}
	rep.Category5 = row(locomoCatGroup(eval.CategoryAdversarial), eval.CategoryAdversarial)
	for _, sample := range samples {
		rep.PerConversation = append(rep.PerConversation, row(locomoConvGroup(sample.ID), 0))
	}
	rep.IngestSeconds = r.ingest.Seconds()
	rep.Queries, rep.QueryP50Ms, rep.QueryP99Ms = r.latency()
	rep.Cleanup.Deleted = r.deleted
	rep.Counts.Memories = r.ingested
	return rep, nil
}

func runLoCoMoConversation(ctx context.Context, r *evalRunner, s evalSettings, sample eval.LoCoMoSample, format eval.TurnFormat,
	means *eval.Means, counts *locomoCounts, progress io.Writer) (err error) {
	user := s.UserPrefix + sample.ID
	var reqs []apiv1.PutRequest
	for _, ss := range sample.Sessions {
		for _, t := range ss.Turns {
			req := apiv1.PutRequest{
				UserID: user, Type: string(memory.Episodic), Text: eval.FormatLoCoMoTurn(t, format),
				OccurredAt: new(ss.Time),
				Metadata:   map[string]string{"dia_id": t.DiaID, "speaker": t.Speaker, "session": strconv.Itoa(ss.Num)},
			}
			if !format.Speaker && t.Speaker != "" {
				req.Entities = []string{t.Speaker}
			}
			reqs = append(reqs, req)
		}
	}
	before := r.ingest
	ids, err := r.put(ctx, reqs)
	if !s.Keep {
		defer func() { err = evalJoin(err, r.remove(ctx, user, ids)) }()
	}
	if err != nil {
		return fmt.Errorf("%s: %w", sample.ID, err)
	}
	dia := make(map[string]string, len(ids))
	for i, id := range ids {
		dia[id] = reqs[i].Metadata["dia_id"]
	}

	asked := 0
	for _, q := range sample.Questions {
		counts.QuestionsInFile++
		for _, e := range q.RawEvidence {
			if id, ok := eval.NormalizeDiaID(e); !ok || id != e {
				if ids, _ := eval.NormalizeEvidence([]string{e}); len(ids) > 0 {
					counts.EvidenceRepaired++
				}
			}
		}
		counts.EvidenceDropped += len(q.Dropped)
		if !q.Usable() {
			counts.SkippedNoEvidence++
			continue
		}
		if s.QuestionsLimit > 0 && asked >= s.QuestionsLimit {
			counts.NotAskedLimit++
			continue
		}
		results, err := r.search(ctx, user, q.Question, sample.AskedAt())
		if err != nil {
			return fmt.Errorf("%s question %d: %w", sample.ID, q.Index, err)
		}
		asked++
		counts.Asked++
		ranked := make([]string, len(results))
		for i, res := range results {
			if d, ok := dia[res.ID]; ok {
				ranked[i] = d
			} else {
				ranked[i] = res.Metadata["dia_id"]
			}
		}
		groups := []string{locomoCatGroup(q.Category)}
		if q.Category >= eval.CategoryMultiHop && q.Category <= eval.CategorySingleHop {
			groups = append(groups, locomoOverall, locomoConvGroup(sample.ID))
		}
		means.Add(eval.RecallAtKs(q.Evidence, ranked, s.K), groups...)
	}
	n, m := means.Mean(locomoConvGroup(sample.ID))
	fmt.Fprintf(progress, "eval locomo: %s: %d turns ingested in %.2fs, %d questions asked, %d in categories 1-4: %s\n",
		sample.ID, len(reqs), (r.ingest - before).Seconds(), asked, n, fmtRecallLine(s.K, m))
	return nil
}

// fmtRecallLine is "recall@1/5/10 0.210/0.450/0.550", or "no recall" without values.
func fmtRecallLine(ks []int, means []float64) string {
	if means == nil {
		return "no recall"
	}
	kk := make([]string, len(ks))
	vv := make([]string, len(ks))
	for i, k := range ks {
		kk[i] = strconv.Itoa(k)
		vv[i] = fmt.Sprintf("%.3f", means[i])
	}
	return "recall@" + strings.Join(kk, "/") + " " + strings.Join(vv, "/")
}

func printLoCoMoReport(w io.Writer, rep locomoReport) error {
	s, c := rep.Settings, rep.Counts
	fmt.Fprintf(w, "LoCoMo evidence recall  file %s  mode %s\n", s.File, modeLabel(s))
	fmt.Fprintf(w, "conversations %d, memories %d; questions %d: %d asked, %d skipped without usable evidence",
		c.Conversations, c.Memories, c.QuestionsInFile, c.Asked, c.SkippedNoEvidence)
	if c.NotAskedLimit > 0 {
		fmt.Fprintf(w, ", %d beyond --questions", c.NotAskedLimit)
	}
	fmt.Fprintf(w, "; evidence entries repaired %d, ids dropped %d\n\n", c.EvidenceRepaired, c.EvidenceDropped)

	tw := newTable(w)
	fmt.Fprintf(tw, "CATEGORY\tQUESTIONS\t%s\n", strings.Join(fmtKHeader("R", s.K), "\t"))
	line := func(name string, r locomoRow) {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", name, r.Questions, strings.Join(fmtRecalls(s.K, r.Recall), "\t"))
	}
	for _, r := range rep.PerCategory {
		line(fmt.Sprintf("%d %s", r.Category, eval.CategoryName(r.Category)), r)
	}
	line("overall (1-4)", rep.Overall)
	line("5 adversarial (apart)", rep.Category5)
	if err := tw.Flush(); err != nil {
		return err
	}
	printEvalFooter(w, s, c.Memories, rep.IngestSeconds, rep.Queries, rep.QueryP50Ms, rep.QueryP99Ms, rep.Cleanup)
	return nil
}
