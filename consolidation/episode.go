package consolidation

import (
	"math"
	"time"
)

// Episode is one event cut from a conversation, or derived from perceptual data.
type Episode struct {
	// ID is empty from Segment; the caller assigns it before storing.
	ID       string    `json:"id,omitempty"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	Messages []Message `json:"messages,omitempty"`
	// Summary is extractive: whole sentences of the episode, bounded in length.
	Summary  string   `json:"summary"`
	Entities []string `json:"entities,omitempty"`
	Tags     []string `json:"tags,omitempty"`
	// Importance in [0, 1]; see importance.
	Importance float64 `json:"importance"`
	// Boundary says why the episode starts (BoundaryStart, BoundaryTimeGap, …).
	Boundary string `json:"boundary,omitempty"`
}

// NoteEpisode is the episode of one user statement made at at, such as a passing state an agent was asked
// to remember.
func NoteEpisode(text string, at time.Time) Episode {
	msgs := []Message{{Role: RoleUser, Content: text, Time: at}}
	return newEpisode(msgs, BoundaryStart, SegmentOptions{}.withDefaults(), nil)
}

// newEpisode builds the episode of msgs; facts[i], when facts is not nil, says whether the built-in extraction
// finds a fact in user message i.
func newEpisode(msgs []Message, why string, o SegmentOptions, facts []bool) Episode {
	texts := make([]string, len(msgs))
	var cands []weighted
	for i, m := range msgs {
		texts[i] = m.Content
		for _, s := range sentences(m.Content) {
			cands = append(cands, weighted{text: s, weight: roleWeight(m.Role)})
		}
	}
	ents := entities(texts, o.MaxEntities)
	return Episode{
		Start:      msgs[0].Time,
		End:        msgs[len(msgs)-1].Time,
		Messages:   append([]Message(nil), msgs...),
		Summary:    summarize(cands, o.MaxSummaryChars),
		Entities:   ents,
		Tags:       topTerms(texts, o.MaxTags),
		Importance: importance(msgs, len(ents), facts),
		Boundary:   why,
	}
}

var (
	salientRe = newKeywords(`(?i)\b(?:remember|important|don't forget|do not forget|decided|decision|booked|`+
		`confirmed|purchased|bought|signed|deadline|deployed|scheduled|cancel(?:l?ed)?)\b`,
		"remember", "important", "don't forget", "do not forget", "decided", "decision", "booked", "confirmed",
		"purchased", "bought", "signed", "deadline", "deployed", "scheduled", "cancel")
	troubleRe = newKeywords(`(?i)\b(?:error|failed|failure|broken|crash(?:ed)?|bug|wrong|exception)\b`,
		"error", "failed", "failure", "broken", "crash", "bug", "wrong", "exception")
)

// importance is a cheap additive score, clamped to [0, 1]:
//
//	0.2 base
//	+0.2 a user sentence that states a durable fact (passes the write gate)
//	+0.2 a salient word: remember, important, decided, booked, confirmed, deadline…
//	+0.1 tool calls (the agent acted)
//	+0.1 trouble: error, failed, crash… (the reference's "anomaly" trigger)
//	+0.1 × min(1, entities/3)
//	+0.1 × min(1, messages/10)
func importance(msgs []Message, nEntities int, facts []bool) float64 {
	v := 0.2
	var fact, salient, tool, trouble bool
	for i, m := range msgs {
		switch {
		case fact || m.Role != RoleUser:
		case facts != nil:
			fact = facts[i]
		default:
			c, _ := Extract(m)
			fact = len(c) > 0
		}
		salient = salient || salientRe.MatchString(m.Content)
		tool = tool || m.Role == RoleTool
		trouble = trouble || troubleRe.MatchString(m.Content)
	}
	for _, b := range []struct {
		on bool
		w  float64
	}{{fact, 0.2}, {salient, 0.2}, {tool, 0.1}, {trouble, 0.1}} {
		if b.on {
			v += b.w
		}
	}
	v += 0.1 * min(1, float64(nEntities)/3)
	v += 0.1 * min(1, float64(len(msgs))/10)
	return math.Round(clamp01(v)*100) / 100 // two decimals: stable to print and compare
}
