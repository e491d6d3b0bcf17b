package retrieval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/eval"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

// BenchmarkPipelineLoCoMo is the tuning and evaluation harness of the pipeline mode on a LoCoMo file read by path
// (the data is never copied here): MEMCLUSTER_LOCOMO names the file (default: the dev split under ../shared/data);
// MEMCLUSTER_LOCOMO_CONVS (comma-separated sample ids) restricts the conversations; MEMCLUSTER_LOCOMO_MISSES names a
// variant whose questions with evidence missing from the top 10 are logged. A measurement tool, so a
// benchmark, run on demand with -bench. It prints recall@5/10 per category for the
// reference hybrid, BM25 alone and the pipeline variants of pipelineVariants.
func BenchmarkPipelineLoCoMo(b *testing.B) {
	t := b
	path := os.Getenv("MEMCLUSTER_LOCOMO")
	if path == "" {
		path = filepath.Join("..", "..", "shared", "data", "locomo", "locomo-dev.json")
	}
	samples, err := eval.LoadLoCoMoFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if c := os.Getenv("MEMCLUSTER_LOCOMO_CONVS"); c != "" {
		ids := strings.Split(c, ",")
		samples = slices.DeleteFunc(samples, func(s eval.LoCoMoSample) bool { return !slices.Contains(ids, s.ID) })
	}
	f := newFixture(t)
	dia := map[string]string{}
	for _, sm := range samples {
		for _, ss := range sm.Sessions {
			var ms []memory.Memory
			for _, turn := range ss.Turns {
				text := eval.FormatLoCoMoTurn(turn, eval.TurnFormat{Speaker: true, Captions: true})
				vecs, _ := f.emb.Embed(context.Background(), []string{text})
				m := memory.Memory{UserID: sm.ID, Type: memory.Episodic, Text: text, OccurredAt: ss.Time,
					CreatedAt: ss.Time, Embedding: vecs[0], EmbedModel: f.emb.Fingerprint(),
					Metadata: map[string]string{"dia_id": turn.DiaID, "speaker": turn.Speaker, "session": strconv.Itoa(ss.Num)}}
				m.ID = f.ids.New(ss.Time)
				dia[m.ID] = turn.DiaID
				ms = append(ms, m)
			}
			cmd, err := storage.EncodePut(ms)
			if err != nil {
				t.Fatal(err)
			}
			f.n++
			f.fsm.Apply(&raft.Log{Index: f.n, Term: 1, Type: raft.LogCommand, Data: cmd})
		}
	}
	ks := []int{5, 10}
	run := func(name string, mode string, vw, tw float64, p PipelineParams) {
		pipelineParams = p
		defer func() { pipelineParams = DefaultPipelineParams }()
		means := eval.NewMeans(len(ks))
		for _, sm := range samples {
			for _, qa := range sm.Questions {
				if !qa.Usable() || qa.Category < 1 || qa.Category > 4 {
					continue
				}
				q := NewQuery(sm.ID, qa.Question)
				q.K, q.MinScore, q.VectorWeight, q.TextWeight, q.Mode = 10, 0, vw, tw, mode
				res := f.search(q)
				ranked := make([]string, len(res))
				for i, r := range res {
					ranked[i] = dia[r.Memory.ID]
				}
				rec := eval.RecallAtKs(qa.Evidence, ranked, ks)
				means.Add(rec, "all", "c"+strconv.Itoa(qa.Category))
				if os.Getenv("MEMCLUSTER_LOCOMO_MISSES") == name && rec[1] < 1 {
					t.Logf("MISS c%d %q evidence %v got %v plan %+v", qa.Category, qa.Question, qa.Evidence, ranked, res[0].Plan)
				}
			}
		}
		line := fmt.Sprintf("%-34s", name)
		for _, g := range []string{"all", "c1", "c2", "c3", "c4"} {
			_, m := means.Mean(g)
			line += fmt.Sprintf("  %s %.3f/%.3f", g, m[0], m[1])
		}
		t.Log(line)
	}
	if os.Getenv("MEMCLUSTER_LOCOMO_BASE") != "" {
		run("hybrid", ModeHybrid, 0.7, 0.3, DefaultPipelineParams)
		run("bm25", ModeHybrid, 0, 1, DefaultPipelineParams)
	}
	for _, v := range pipelineVariants() {
		run(v.name, ModePipeline, 0.7, 0.3, v.p)
	}
}

type variant struct {
	name string
	p    PipelineParams
}

func pipelineVariants() []variant {
	d := DefaultPipelineParams
	vs := []variant{{"default", d}}
	with := func(name string, f func(p *PipelineParams)) {
		p := d
		f(&p)
		vs = append(vs, variant{name, p})
	}
	d.Fusion = "linear"
	for _, w := range []float64{0, 0.1, 0.2} {
		for _, n := range []int{2, 3, 5} {
			with(fmt.Sprintf("episode %.2f top %d", w, n), func(p *PipelineParams) { p.EpisodeSupport, p.EpisodeTop = w, n })
		}
	}
	with("rrf fusion", func(p *PipelineParams) { p.Fusion, p.VectorWeight, p.TextWeight = "rrf", 0.3, 0.7 })
	with("no actor factor", func(p *PipelineParams) { p.ActorBoost = 0 })
	with("no neighbours", func(p *PipelineParams) { p.Spread = 0 })
	with("feedback 10 docs", func(p *PipelineParams) { p.FeedbackDocs = 10 })
	with("no time factor", func(p *PipelineParams) { p.TimeBoost = 0 })
	with("no reply share", func(p *PipelineParams) { p.ReplyShare = 0 })
	with("factors not on context", func(p *PipelineParams) { p.ContextActor = false })
	with("share 0.3", func(p *PipelineParams) { p.Share = 0.3 })
	with("reply share 0.8", func(p *PipelineParams) { p.ReplyShare = 0.8 })
	with("actor 0.4", func(p *PipelineParams) { p.ActorBoost = 0.4 })
	with("time 0.5", func(p *PipelineParams) { p.TimeBoost = 0.5 })
	with("drop time terms", func(p *PipelineParams) { p.KeepTimeTerms = false })
	return vs
}
