package retrieval

import (
	"slices"
	"strings"
	"time"
)

// Plan is what the pipeline understood of a query, shown with the results.
type Plan struct {
	// Terms are the query's content words: lower-cased, without stop and question words.
	Terms []string `json:"terms"`
	// Actors are the user's actors (speakers, authors: learned from the memories) the query names.
	Actors []string `json:"actors,omitempty"`
	// TextQuery is what went to BM25.
	TextQuery string `json:"text_query"`
	// Fusion names how the two sides were combined.
	Fusion string `json:"fusion"`
	// Time is the period the query names (its first time expression, read in UTC against the query's now):
	// memories inside it are favoured.
	Time *TimeRange `json:"time,omitempty"`
	// Expansion are the words the best first-pass hits added to a second BM25 query (feedback).
	Expansion []string `json:"expansion,omitempty"`
}

// stopWords are English function and question words: they carry no topic. Lower case.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or but if then else of to in on at by for with from into onto about
		as than so such too very can could would should will shall may might must do does did done doing have has had
		having be is am are was were been being i me my mine myself we us our ours you your yours he him his she her hers
		it its they them their theirs this that these those there here what which who whom whose when where why how
		not no nor only own same some any all both each few more most other just also ever s t d ll m re ve`) {
		m[w] = true
	}
	return m
}()

// queryTerms splits text into lower-cased content words.
func queryTerms(text string) []string {
	var out []string
	for _, tok := range nameTokens(text) {
		if !stopWords[tok] && !slices.Contains(out, tok) {
			out = append(out, tok)
		}
	}
	return out
}

// planLocked analyses q against what the user's memories know; the caller holds ShardIndex.mu for reading.
func (s *ShardIndex) planLocked(q *Query, p *PipelineParams) Plan {
	pl := Plan{Fusion: p.Fusion}
	rest, tr := blankTimeExprs(q.Text, q.Now, time.UTC)
	pl.Time = tr
	if p.KeepTimeTerms {
		rest = q.Text
	}
	pl.Terms = queryTerms(rest)
	tl := s.tl.users[q.UserID]
	named := map[string]bool{}
	if tl != nil {
		for actor := range tl.actors {
			for _, tok := range nameTokens(actor) {
				if len(tok) > 1 && !stopWords[tok] && slices.Contains(pl.Terms, tok) {
					pl.Actors = append(pl.Actors, actor)
					named[tok] = true
					break
				}
			}
		}
	}
	slices.Sort(pl.Actors)
	// An actor's name is in most of their memories: a weak term for BM25. When it is dropped, the actor
	// factor carries it instead.
	if p.DropActorTerms && len(named) > 0 && len(named) < len(pl.Terms) {
		var keep []string
		for _, t := range pl.Terms {
			if !named[t] {
				keep = append(keep, t)
			}
		}
		pl.TextQuery = strings.Join(keep, " ")
	} else {
		pl.TextQuery = strings.Join(pl.Terms, " ")
	}
	if pl.TextQuery == "" {
		pl.TextQuery = q.Text
	}
	return pl
}
