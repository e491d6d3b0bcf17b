package tiering_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/memcluster/memcluster/memory"
)

// gen makes realistic memories of one user from a seed: English episodes built from varied sentence
// templates, real ULIDs, tags, entities, session metadata and a 256-dim float32 embedding (the hot form).
type gen struct {
	r    *rand.Rand
	user string
	// zipf, when set, makes texts of Zipf-distributed pseudo-words instead of templates: no repeated
	// phrases, about the word entropy of English prose, so a harder case for compression.
	zipf  *rand.Zipf
	vocab []string
}

// diverse switches g to pseudo-word texts over a 20000-word vocabulary.
func (g *gen) diverse() *gen {
	syl := []string{"ka", "lo", "mi", "ten", "ra", "su", "ble", "or", "an", "vi", "pe", "dro", "ist", "um", "ca",
		"the", "sta", "ne", "gor", "li", "wa", "ex", "po", "ri", "men", "tal", "qu", "ion", "ed", "ing"}
	seen := map[string]bool{}
	for len(g.vocab) < 20000 {
		var b strings.Builder
		for i := 0; i < 1+g.r.IntN(4); i++ {
			b.WriteString(syl[g.r.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			g.vocab = append(g.vocab, w)
		}
	}
	g.zipf = rand.NewZipf(g.r, 1.1, 2, uint64(len(g.vocab)-1))
	return g
}

func (g *gen) zipfSentence() string {
	words := make([]string, 8+g.r.IntN(18))
	for i := range words {
		words[i] = g.vocab[g.zipf.Uint64()]
	}
	return strings.ToUpper(words[0][:1]) + strings.Join(words, " ")[1:] + "."
}

func newGen(seed uint64, user string) *gen {
	return &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), user: user}
}

var (
	people  = []string{"Maya", "Jonas", "Priya", "Tom", "Aiko", "Carlos", "Lena", "Dr. Okafor", "Grandma Rose", "Sam", "Nadia", "Felix"}
	places  = []string{"the Lisbon office", "Blue Bottle on Market Street", "the climbing gym", "Riverside Park", "the dentist", "Gate 14 at Schiphol", "the farmers market", "Aunt Clara's house", "the co-working space", "Tartine"}
	topics  = []string{"the Q3 roadmap", "the kitchen renovation", "sourdough hydration", "the half-marathon plan", "moving to Berlin", "the tax return", "the Kubernetes migration", "the wedding playlist", "learning Portuguese", "the insurance claim", "the quarterly budget", "a new laptop"}
	days    = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "next week", "the 14th", "the end of the month"}
	foods   = []string{"pad thai", "oat milk lattes", "mushroom risotto", "spicy ramen", "a Greek salad", "dark chocolate", "shakshuka", "sushi"}
	moods   = []string{"tired but hopeful", "anxious about it", "relieved", "excited", "frustrated with the delays", "calm", "a bit overwhelmed", "proud of the progress"}
	tagPool = []string{"work", "family", "health", "travel", "food", "finance", "fitness", "learning", "home", "friends", "planning", "errands"}
)

var templates = []string{
	"Met {p} at {pl} to talk about {t}; we agreed to revisit it on {d}.",
	"{p} recommended trying {f} and mentioned that {t} is running {n} days behind schedule.",
	"The user said they felt {m} after the call with {p} about {t}.",
	"Booked a table at {pl} for {d} evening because {p} is visiting for {n} days.",
	"Reminder set: pay the invoice of {n} euros for {t} before {d}.",
	"Ran {n} kilometres along {pl} this morning and the left knee felt fine afterwards.",
	"Asked for a summary of {t}, then decided to ask {p} for a second opinion.",
	"The flight to Porto was delayed by {n} minutes, so the meeting with {p} moved to {d}.",
	"User prefers {f} for lunch and dislikes meetings before ten in the morning.",
	"Discussed {t} with {p}: the main risk is the budget, which is {n} percent over plan.",
	"Picked up the parcel from {pl}; it turned out to be the replacement charger for {t}.",
	"Felt {m} about {t} and wrote down three next steps to take by {d}.",
	"{p} called to say the appointment at {pl} is confirmed for {d} at {n}:30.",
	"Spent the evening reading about {t} and bookmarked {n} articles to finish later.",
	"Cooked {f} for {p}, who asked for the recipe and a copy of the shopping list.",
}

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *gen) sentence() (string, []string) {
	p, pl := g.pick(people), g.pick(places)
	s := strings.NewReplacer("{p}", p, "{pl}", pl, "{t}", g.pick(topics), "{d}", g.pick(days), "{f}", g.pick(foods),
		"{m}", g.pick(moods), "{n}", fmt.Sprint(2+g.r.IntN(97))).Replace(g.pick(templates))
	var ents []string
	if strings.Contains(s, p) {
		ents = append(ents, p)
	}
	if strings.Contains(s, pl) {
		ents = append(ents, pl)
	}
	return s, ents
}

// memory returns an episodic memory that occurred at t.
func (g *gen) memory(t time.Time) memory.Memory {
	var texts, ents []string
	for i := 0; i < 1+g.r.IntN(3); i++ {
		s, e := g.sentence()
		if g.zipf != nil {
			s = g.zipfSentence()
		}
		texts, ents = append(texts, s), append(ents, e...)
	}
	tags := []string{g.pick(tagPool)}
	if g.r.IntN(2) == 0 {
		tags = append(tags, g.pick(tagPool))
	}
	created := t.Add(time.Duration(g.r.IntN(3600)) * time.Second)
	return memory.Memory{
		ID: g.ulid(created), UserID: g.user, AgentID: "assistant", RunID: "run-" + g.ulid(t)[:10],
		Type: memory.Episodic, Text: strings.Join(texts, " "), OccurredAt: t, CreatedAt: created,
		Tags: dedupe(tags), Entities: dedupe(ents), Importance: g.r.Float64() * 0.79,
		Metadata:  map[string]string{memory.MetaSource: "session", "session_id": g.ulid(t), "turns": fmt.Sprint(2 + g.r.IntN(20))},
		Embedding: g.embedding(256), EmbedModel: "openai/text-embedding-3-small@256",
	}
}

func (g *gen) ulid(t time.Time) string {
	return ulid.MustNew(ulid.Timestamp(t), randReader{g.r}).String()
}

// randReader makes the seeded generator an entropy source for ULIDs.
type randReader struct{ r *rand.Rand }

func (r randReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r.r.Uint32())
	}
	return len(p), nil
}

func (g *gen) embedding(dim int) []float32 {
	v := make([]float32, dim)
	var n float64
	for i := range v {
		f := g.r.NormFloat64()
		v[i], n = float32(f), n+f*f
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

// memories returns n memories spread over the span before end, one every span/n.
func (g *gen) memories(n int, end time.Time, span time.Duration) []memory.Memory {
	out := make([]memory.Memory, n)
	for i := range out {
		t := end.Add(-span + span/time.Duration(n)*time.Duration(i)).Truncate(time.Second)
		out[i] = g.memory(t.Add(time.Duration(g.r.IntN(1e9))))
	}
	return out
}

func dedupe(xs []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
