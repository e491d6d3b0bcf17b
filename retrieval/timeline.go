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
}

type timeline struct {
	ids     []string // sorted
	entries map[string]*tlEntry
	names   map[string]int // lower-cased name token -> memories carrying it
	actors  map[string]int // lower-cased actor -> memories from it
}

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
	tl := t.users[m.UserID]
	if tl == nil {
		tl = &timeline{entries: map[string]*tlEntry{}, names: map[string]int{}, actors: map[string]int{}}
		t.users[m.UserID] = tl
	}
	if old, ok := tl.entries[m.ID]; ok {
		tl.dropNames(old)
	} else {
		i, _ := slices.BinarySearch(tl.ids, m.ID)
		tl.ids = slices.Insert(tl.ids, i, m.ID)
	}
	e := &tlEntry{occurred: m.OccurredAt}
	seen := map[string]bool{}
	add := func(tok string) {
		if !seen[tok] {
			seen[tok] = true
			e.names = append(e.names, tok)
		}
	}
	if a := actorOf(m); a != "" {
		e.actor = strings.ToLower(a)
		for _, tok := range nameTokens(a) {
			add(tok)
		}
	}
	for _, ent := range m.Entities {
		for _, tok := range nameTokens(ent) {
			add(tok)
		}
	}
	for _, n := range e.names {
		tl.names[n]++
	}
	if e.actor != "" {
		tl.actors[e.actor]++
	}
	tl.entries[m.ID] = e
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
