package retrieval

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

// Invented conversation data: two people, two episodes a day apart.
func putEpisodes(f *fixture) (question, answer, otherDay memory.Memory) {
	day1, day2 := t0, t0.Add(24*time.Hour)
	f.put(memory.Memory{UserID: "u", Text: "Oskar: morning! the bakery on the corner finally reopened", OccurredAt: day1})
	question = f.put(memory.Memory{UserID: "u", Text: "Oskar: did you ever try paragliding over the valley?", OccurredAt: day1})
	answer = f.put(memory.Memory{UserID: "u", Text: "Mira: yes, twice last summer with my cousin, it was breathtaking", OccurredAt: day1})
	f.put(memory.Memory{UserID: "u", Text: "Oskar: wow, I would be far too scared", OccurredAt: day1})
	otherDay = f.put(memory.Memory{UserID: "u", Text: "Mira: my cousin is visiting next week", OccurredAt: day2})
	f.put(memory.Memory{UserID: "u", Text: "Oskar: tell her the bakery reopened", OccurredAt: day2})
	f.put(memory.Memory{UserID: "other", Text: "Mira: paragliding over the valley again", OccurredAt: day1})
	return
}

func pipelineQuery(text string) Query {
	q := NewQuery("u", text)
	q.Mode, q.MinScore, q.K = ModePipeline, 0, 10
	return q
}

func TestPipelineModeValidated(t *testing.T) {
	q := NewQuery("u", "x")
	for _, m := range []string{"", ModeHybrid, ModePipeline} {
		q.Mode = m
		if err := q.Validate(); err != nil {
			t.Fatalf("mode %q: %v", m, err)
		}
	}
	q.Mode = "rerank"
	if err := q.Validate(); !errors.Is(err, memory.ErrInvalid) {
		t.Fatalf("unknown mode accepted: %v", err)
	}
}

func TestPipelinePlanLearnsActors(t *testing.T) {
	f := newFixture(t)
	putEpisodes(f)
	res := f.search(pipelineQuery("When did Mira go paragliding?"))
	if len(res) == 0 || res[0].Plan == nil {
		t.Fatalf("no plan: %+v", res)
	}
	p := res[0].Plan
	if !slices.Equal(p.Actors, []string{"mira"}) {
		t.Fatalf("actors %v", p.Actors)
	}
	if !slices.Equal(p.Terms, []string{"mira", "go", "paragliding"}) || p.Fusion != "linear" {
		t.Fatalf("plan %+v", p)
	}
	for _, r := range res[1:] {
		if r.Plan != nil {
			t.Fatal("plan on a later result")
		}
	}
	// A name nobody in the user's memories carries is no actor.
	if res := f.search(pipelineQuery("Did Ingrid go paragliding?")); len(res[0].Plan.Actors) != 0 {
		t.Fatalf("unknown actor planned: %v", res[0].Plan.Actors)
	}
}

func TestPipelineActorFactor(t *testing.T) {
	f := newFixture(t)
	putEpisodes(f)
	for _, r := range f.search(pipelineQuery("Mira cousin")) {
		fromMira := r.Memory.Text[:4] == "Mira"
		if want := map[bool]float64{true: 1 + DefaultPipelineParams.ActorBoost, false: 1}[fromMira]; r.Actor != want {
			t.Fatalf("%q: actor factor %v, want %v", r.Memory.Text, r.Actor, want)
		}
		if r.Memory.UserID != "u" {
			t.Fatal("another user's memory")
		}
	}
}

func TestPipelineEpisodeNeighbours(t *testing.T) {
	f := newFixture(t)
	question, answer, otherDay := putEpisodes(f)
	res := f.search(pipelineQuery("paragliding valley"))
	pos := func(id string) int { return slices.IndexFunc(res, func(r Result) bool { return r.Memory.ID == id }) }
	if pos(question.ID) != 0 {
		t.Fatalf("the matching turn is not first: %+v", res)
	}
	a, o := pos(answer.ID), pos(otherDay.ID)
	// Both adjacent turns of the hit get Share of its score (the one before it also matches a little by vector).
	if a < 1 || a > 2 || res[a].Context < DefaultPipelineParams.Share*0.99 || res[a].TextScore != 0 || (o >= 0 && o < a) {
		t.Fatalf("the reply next to the hit did not get its share: at %d, %+v", a, res)
	}
	// The turn of another day is another episode: no share.
	if o >= 0 && res[o].Context != 0 {
		t.Fatalf("share crossed the episode gap: %+v", res[o])
	}
	// The reference hybrid mode is untouched: no shares, no actor factor, no plan.
	q := pipelineQuery("paragliding valley")
	q.Mode = ModeHybrid
	for _, r := range f.search(q) {
		if r.Context != 0 || r.Actor != 0 || r.Plan != nil {
			t.Fatalf("hybrid result with pipeline parts: %+v", r)
		}
	}
}

func TestPipelineDeterministicAndDeletes(t *testing.T) {
	f := newFixture(t)
	_, answer, _ := putEpisodes(f)
	ids := func(rs []Result) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Memory.ID)
		}
		return out
	}
	a, b := f.search(pipelineQuery("paragliding with my cousin")), f.search(pipelineQuery("paragliding with my cousin"))
	if !slices.Equal(ids(a), ids(b)) {
		t.Fatal("pipeline results differ between identical searches")
	}
	f.delete("u", answer.ID)
	for _, r := range f.search(pipelineQuery("paragliding with my cousin")) {
		if r.Memory.ID == answer.ID {
			t.Fatal("deleted memory returned")
		}
	}
	if tl := f.idx.tl.users["u"]; slices.Contains(tl.ids, answer.ID) || tl.entries[answer.ID] != nil {
		t.Fatal("deleted memory still in the timeline")
	}
}

func (f *fixture) delete(user, id string) {
	f.t.Helper()
	cmd, err := storage.EncodeDelete(storage.DeletePayload{UserID: user, IDs: []string{id}})
	if err != nil {
		f.t.Fatal(err)
	}
	f.n++
	f.fsm.Apply(&raft.Log{Index: f.n, Term: 1, Type: raft.LogCommand, Data: cmd})
}

func TestPipelineScoresAbsolute(t *testing.T) {
	f := newFixture(t)
	question, _, _ := putEpisodes(f)
	res := f.search(pipelineQuery("paragliding over the valley"))
	if len(res) == 0 || res[0].Memory.ID != question.ID || res[0].Score < 0.8 || res[0].Score > 1 {
		t.Fatalf("a full match does not score high: %+v", res)
	}
	for _, r := range res[1:] {
		if r.Score > res[0].Score {
			t.Fatalf("order broken by calibration: %+v", res)
		}
	}
	// A query about nothing stored: BM25 finds nothing, the vector side some weak neighbours. With the default
	// floor nothing comes back; without it, whatever comes back scores low.
	q := pipelineQuery("quantum chromodynamics lecture notes")
	for _, r := range f.search(q) {
		if r.Score >= DefaultMinScore {
			t.Fatalf("unrelated memory scores %.3f: %q", r.Score, r.Memory.Text)
		}
	}
	q.MinScore = DefaultMinScore
	if res := f.search(q); len(res) != 0 {
		t.Fatalf("query about nothing stored returned %d results at the default floor", len(res))
	}
}

func TestPipelineTimeFactor(t *testing.T) {
	f := newFixture(t)
	_, answer, otherDay := putEpisodes(f)
	day2 := otherDay.OccurredAt.UTC().Format("January 2, 2006")
	res := f.search(pipelineQuery("What did Mira say about her cousin on " + day2 + "?"))
	if len(res) == 0 || res[0].Memory.ID != otherDay.ID || res[0].Plan.Time == nil {
		t.Fatalf("the memory of the day the query names is not first: %+v", res)
	}
	// Without a date the older, longer match about the cousin is as good: the factor, not the words, decided.
	res = f.search(pipelineQuery("What did Mira say about her cousin?"))
	if len(res) < 2 || res[0].Plan.Time != nil || !slices.ContainsFunc(res[:2], func(r Result) bool { return r.Memory.ID == answer.ID }) {
		t.Fatalf("plan or order without a date: %+v", res)
	}
}

// A memory whose episode matches the query in other turns too outranks the same words said alone: the
// episode support, not the neighbour share (off here), decides.
func TestPipelineEpisodeSupport(t *testing.T) {
	defer func() { pipelineParams = DefaultPipelineParams }()
	for _, on := range []bool{false, true} {
		p := DefaultPipelineParams
		p.Spread = 0
		if !on {
			p.EpisodeSupport = 0
		}
		pipelineParams = p
		f := newFixture(t)
		day1, day3 := t0, t0.Add(48*time.Hour)
		f.put(memory.Memory{UserID: "u", Text: "Oskar: the tomatoes in the greenhouse ripened", OccurredAt: day1})
		inEpisode := f.put(memory.Memory{UserID: "u", Text: "Mira: I planted tomatoes", OccurredAt: day1})
		f.put(memory.Memory{UserID: "u", Text: "Oskar: green tomatoes make a good chutney", OccurredAt: day1})
		alone := f.put(memory.Memory{UserID: "u", Text: "Mira: I planted tomatoes", OccurredAt: day3})
		var got []string
		for _, r := range f.search(pipelineQuery("planted tomatoes")) {
			if r.Memory.ID == inEpisode.ID || r.Memory.ID == alone.ID {
				got = append(got, r.Memory.ID)
			}
		}
		want := []string{alone.ID, inEpisode.ID} // a tie: the later id first
		if on {
			want = []string{inEpisode.ID, alone.ID}
		}
		if !slices.Equal(got, want) {
			t.Errorf("support %v: order %v, want %v", on, got, want)
		}
	}
}
