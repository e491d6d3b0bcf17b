package retrieval

import (
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/memcluster/memcluster/memory"
)

// timelines is the in-memory, per-user view the pipeline mode needs beyond the two indexes: each user's memory
// ids in order (ULIDs sort by time, and ids minted in one batch keep their request order), each memory's
// occurred-at time and actor (who said or did it), and the names the user's memories carry (actors and
// entities), with how many memories carry each. It is derived state, kept under ShardIndex.mu.
type timelines struct {
	users map[string]*timeline
	// syms holds the values the timelines and the attributes keep of many memories; it is reset with them.
	syms symbols
}

type timeline struct {
	ids     []string            // sorted
	entries map[string]*tlEntry // by id: the ids of ids, always
	names   map[string]int      // lower-cased name token -> memories carrying it
	actors  map[string]int      // lower-cased actor -> memories from it
	// starts are the ids that begin an episode under episodeGap (sorted; ids[0] is always one): the first id, and
	// every id whose occurred-at time is more than episodeGap from its predecessor's. Kept as memories come and
	// go, so finding a memory's episode is a binary search, not a walk back through it (a user whose 100,000
	// memories arrived in one burst is one episode, and a search walked it for every candidate).
	starts []string
}

// episodeGap is the gap the timelines keep their episode starts for: the pipeline's default. A search run with
// another gap (tuning) walks the timeline instead.
var episodeGap = DefaultPipelineParams.EpisodeGap

type tlEntry struct {
	occurred time.Time
	actor    string   // lower-cased; "" when unknown
	names    []string // lower-cased name tokens of the actor and the entities
}

func newTimelines() *timelines { return &timelines{users: map[string]*timeline{}} }

// actorOf finds who a memory is from: the metadata "speaker" (or "actor", "author") when set, else a short
// "Name: " prefix of the text made of capitalised words (the usual shape of a transcribed turn).
func actorOf(m memory.Memory) string {
	for _, k := range []string{"speaker", "actor", "author"} {
		if v := strings.TrimSpace(m.Metadata[k]); v != "" {
			return v
		}
	}
	head, _, ok := strings.Cut(m.Text, ": ")
	if !ok || len(head) == 0 || len(head) > 40 {
		return ""
	}
	words := strings.Fields(head)
	if len(words) == 0 || len(words) > 3 {
		return ""
	}
	for _, w := range words {
		r, _ := utf8.DecodeRuneInString(w)
		if !unicode.IsUpper(r) {
			return ""
		}
		for _, c := range w {
			if !unicode.IsLetter(c) && c != '-' && c != '\'' && c != '.' {
				return ""
			}
		}
	}
	return head
}

// nameTokens splits a name into lower-cased word tokens.
func nameTokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// noteLocked records m; the caller holds ShardIndex.mu for writing.
func (t *timelines) noteLocked(m memory.Memory) {
	t.noteEntryLocked(m.UserID, m.ID, entryOf(m, &t.syms))
}

// entryOf is what the timelines keep of m: its time, its actor and the name tokens of the actor and entities.
func entryOf(m memory.Memory, syms *symbols) *tlEntry {
	e := &tlEntry{occurred: m.OccurredAt}
	var seen map[string]bool // only past a few names: for those a scan costs less than a map
	add := func(tok string) {
		if len(e.names) < 16 {
			if slices.Contains(e.names, tok) {
				return
			}
		} else {
			if seen == nil {
				seen = make(map[string]bool, 2*len(e.names))
				for _, n := range e.names {
					seen[n] = true
				}
			}
			if seen[tok] {
				return
			}
			seen[tok] = true
		}
		e.names = append(e.names, syms.intern(tok))
	}
	if a := actorOf(m); a != "" {
		e.actor = syms.intern(strings.ToLower(a))
		for _, tok := range nameTokens(a) {
			add(tok)
		}
	}
	for _, ent := range m.Entities {
		for _, tok := range nameTokens(ent) {
			add(tok)
		}
	}
	return e
}

// noteEntryLocked records the entry e of memory id of user, replacing any earlier one; the caller holds
// ShardIndex.mu for writing.
func (t *timelines) noteEntryLocked(user, id string, e *tlEntry) {
	tl := t.users[user]
	if tl == nil {
		tl = &timeline{entries: map[string]*tlEntry{}, names: map[string]int{}, actors: map[string]int{}}
		t.users[user] = tl
	}
	i, found := slices.BinarySearch(tl.ids, id)
	if old, ok := tl.entries[id]; ok {
		tl.dropNames(old)
	} else if !found {
		tl.ids = slices.Insert(tl.ids, i, id)
	}
	for _, n := range e.names {
		tl.names[n]++
	}
	if e.actor != "" {
		tl.actors[e.actor]++
	}
	tl.entries[id] = e
	tl.markStart(i)
	tl.markStart(i + 1)
}

// markStart records whether ids[i] begins an episode, from its predecessor; past the end it does nothing.
func (tl *timeline) markStart(i int) {
	if i >= len(tl.ids) {
		return
	}
	id := tl.ids[i]
	start := i == 0
	if !start {
		a, b := tl.entries[tl.ids[i-1]], tl.entries[id]
		start = a == nil || b == nil || absDur(b.occurred.Sub(a.occurred)) > episodeGap
	}
	j, in := slices.BinarySearch(tl.starts, id)
	switch {
	case start && !in:
		tl.starts = slices.Insert(tl.starts, j, id)
	case !start && in:
		tl.starts = slices.Delete(tl.starts, j, j+1)
	}
}

func (tl *timeline) dropNames(e *tlEntry) {
	if e.actor != "" {
		if tl.actors[e.actor]--; tl.actors[e.actor] <= 0 {
			delete(tl.actors, e.actor)
		}
	}
	for _, n := range e.names {
		if tl.names[n]--; tl.names[n] <= 0 {
			delete(tl.names, n)
		}
	}
}

// forgetLocked removes a memory; the caller holds ShardIndex.mu for writing.
func (t *timelines) forgetLocked(user, id string) {
	tl := t.users[user]
	if tl == nil {
		return
	}
	if e, ok := tl.entries[id]; ok {
		tl.dropNames(e)
		delete(tl.entries, id)
	}
	if i, ok := slices.BinarySearch(tl.ids, id); ok {
		tl.ids = slices.Delete(tl.ids, i, i+1)
		if j, in := slices.BinarySearch(tl.starts, id); in {
			tl.starts = slices.Delete(tl.starts, j, j+1)
		}
		tl.markStart(i) // its successor now follows its predecessor
	}
	if len(tl.ids) == 0 {
		delete(t.users, user)
	}
}

// neighbour is a memory near another in the user's timeline: dist positions away (1 is adjacent), after or
// before it.
type neighbour struct {
	id    string
	dist  int
	after bool
}

// neighbours returns the ids within dist positions of id in the user's timeline that belong to the same
// episode: no gap of more than gap between consecutive occurred-at times on the way.
func (tl *timeline) neighbours(id string, dist int, gap time.Duration) []neighbour {
	i, ok := slices.BinarySearch(tl.ids, id)
	if !ok {
		return nil
	}
	var out []neighbour
	for _, dir := range []int{-1, 1} {
		prev := tl.entries[id]
		for d := 1; d <= dist; d++ {
			j := i + dir*d
			if j < 0 || j >= len(tl.ids) {
				break
			}
			e := tl.entries[tl.ids[j]]
			if e == nil || prev == nil || absDur(e.occurred.Sub(prev.occurred)) > gap {
				break
			}
			out = append(out, neighbour{id: tl.ids[j], dist: d, after: dir > 0})
			prev = e
		}
	}
	return out
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
