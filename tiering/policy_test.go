package tiering_test

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/tiering"
)

var now = time.Date(2025, 6, 15, 12, 0, 0, 0, time.UTC)

const day = 24 * time.Hour

func mem(id string, typ memory.Type, age time.Duration, md map[string]string) memory.Memory {
	return memory.Memory{ID: id, UserID: "u", Type: typ, Text: "Something happened.", OccurredAt: now.Add(-age),
		CreatedAt: now.Add(-age), Metadata: md}
}

func policy(t *testing.T, o tiering.Options) *tiering.Policy {
	t.Helper()
	p, err := tiering.NewPolicy(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDecide(t *testing.T) {
	reads := func(ages ...time.Duration) tiering.AccessStat {
		var a tiering.AccessStat
		for _, x := range ages {
			a.Recent = append(a.Recent, now.Add(-x))
		}
		return a
	}
	perc := map[string]string{"source": "perceptual", "signal": "hr"}
	late := mem("late", memory.Episodic, 200*day, nil)
	late.CreatedAt = now.Add(-10 * day) // imported recently: hot for 90 days from the write
	important := mem("imp", memory.Episodic, 200*day, nil)
	important.Importance = 0.8
	for _, c := range []struct {
		name  string
		m     memory.Memory
		a     tiering.AccessStat
		o     tiering.Options
		tiers bool
	}{
		{"episodic 89 days", mem("e", memory.Episodic, 89*day, nil), reads(), tiering.Options{}, false},
		{"episodic 91 days", mem("e", memory.Episodic, 91*day, nil), reads(), tiering.Options{}, true},
		{"episodic written late", late, reads(), tiering.Options{}, false},
		{"episodic important", important, reads(), tiering.Options{}, false},
		{"episodic read 3 times", mem("e", memory.Episodic, 200*day, nil), reads(day, 2*day, 29*day), tiering.Options{}, false},
		{"episodic read 3 times, one too old", mem("e", memory.Episodic, 200*day, nil), reads(day, 2*day, 31*day), tiering.Options{}, true},
		{"perceptual type 8 days", mem("p", memory.Perceptual, 8*day, nil), reads(), tiering.Options{}, true},
		{"perceptual type 6 days", mem("p", memory.Perceptual, 6*day, nil), reads(), tiering.Options{}, false},
		{"perceptual episode 8 days, read often", mem("p", memory.Episodic, 8*day, perc), reads(day, day, day), tiering.Options{}, true},
		{"current fact", mem("f", memory.Semantic, 400*day, map[string]string{"fact_status": "current"}), reads(), tiering.Options{}, false},
		{"fact of an unknown status", mem("f", memory.Semantic, 400*day, map[string]string{"fact_status": "disputed"}), reads(), tiering.Options{}, false},
		{"fact without status", mem("f", memory.Semantic, 400*day, nil), reads(), tiering.Options{}, false},
		{"superseded fact 31 days", mem("f", memory.Semantic, 31*day, map[string]string{"fact_status": "superseded"}), reads(), tiering.Options{}, true},
		{"retracted fact 29 days", mem("f", memory.Semantic, 29*day, map[string]string{"fact_status": "retracted"}), reads(), tiering.Options{}, false},
		{"working", mem("w", memory.Working, 999*day, nil), reads(), tiering.Options{}, false},
		{"archive entry", mem("a", memory.Episodic, 999*day, map[string]string{"tier": "archive"}), reads(), tiering.Options{}, false},
		{"older-than 180d keeps a 100-day episode", mem("e", memory.Episodic, 100*day, nil), reads(), tiering.Options{OlderThan: 180 * day}, false},
		{"older-than 180d keeps a 100-day perception", mem("p", memory.Perceptual, 100*day, nil), reads(), tiering.Options{OlderThan: 180 * day}, false},
		{"older-than 180d tiers a 181-day episode", mem("e", memory.Episodic, 181*day, nil), reads(), tiering.Options{OlderThan: 180 * day}, true},
		{"older-than 30d tiers a 31-day episode", mem("e", memory.Episodic, 31*day, nil), reads(), tiering.Options{OlderThan: 30 * day}, true},
		{"older-than keeps pins", important, reads(), tiering.Options{OlderThan: 30 * day}, false},
		{"older-than keeps current facts", mem("f", memory.Semantic, 400*day, map[string]string{"fact_status": "current"}), reads(), tiering.Options{OlderThan: 30 * day}, false},
	} {
		got, why := policy(t, c.o).Decide(&c.m, c.a, now)
		if got != c.tiers {
			t.Errorf("%s: tiers=%v (%s), want %v", c.name, got, why, c.tiers)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	for name, o := range map[string]tiering.Options{
		"negative age":      {EpisodicHotFor: -day},
		"importance > 1":    {PinImportance: 1.5},
		"negative accesses": {PinAccesses: -1},
		"older-than typo":   {OlderThan: 180 * time.Second},
		"too many items":    {MaxItems: 1 << 20},
	} {
		if err := o.Validate(); !errors.Is(err, tiering.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
		if _, err := tiering.NewPolicy(o); err == nil {
			t.Errorf("%s: NewPolicy accepted it", name)
		}
	}
	if got := policy(t, tiering.Options{}).Options(); !reflect.DeepEqual(got, tiering.DefaultOptions) {
		t.Fatalf("defaults %+v, want %+v", got, tiering.DefaultOptions)
	}
	want := tiering.DefaultOptions
	want.EpisodicHotFor, want.MaxItems = 10*day, 7
	if got := policy(t, tiering.Options{EpisodicHotFor: 10 * day, MaxItems: 7}).Options(); got != want {
		t.Fatalf("%+v, want %+v", got, want)
	}
}

func TestSelectGroups(t *testing.T) {
	at := func(y int, mo time.Month, d int) time.Time { return time.Date(y, mo, d, 12, 0, 0, 0, time.UTC) }
	m := func(id, user string, typ memory.Type, t time.Time, md map[string]string, scope memory.Scope) memory.Memory {
		return memory.Memory{ID: id, UserID: user, Type: typ, Text: "x.", OccurredAt: t, CreatedAt: t, Metadata: md, Scope: scope}
	}
	hr := map[string]string{"source": "perceptual", "signal": "heart_rate"}
	steps := map[string]string{"signal": "steps"}
	ms := []memory.Memory{
		m("e3", "bob", memory.Episodic, at(2025, 1, 31), nil, ""),
		m("e1", "bob", memory.Episodic, at(2025, 1, 2), nil, memory.Private),
		m("e2", "bob", memory.Episodic, at(2025, 2, 1), nil, ""),            // next month
		m("e4", "bob", memory.Episodic, at(2025, 1, 5), nil, memory.Shared), // other scope
		m("e5", "alice", memory.Episodic, at(2025, 1, 5), nil, ""),
		m("p1", "bob", memory.Episodic, at(2025, 1, 6), hr, ""),
		m("p2", "bob", memory.Perceptual, at(2025, 1, 7), steps, ""),
		m("p3", "bob", memory.Perceptual, at(2025, 1, 8), hr, ""),
		m("w1", "bob", memory.Working, at(2020, 1, 1), nil, ""),
		m("e1", "bob", memory.Episodic, at(2025, 1, 2), nil, ""), // duplicate
		m("new", "bob", memory.Episodic, now.Add(-day), nil, ""),
	}
	type sig struct {
		user   string
		class  tiering.Class
		typ    memory.Type
		signal string
		scope  memory.Scope
		month  time.Month
		ids    []string
	}
	want := []sig{
		{"alice", tiering.ClassEpisodic, memory.Episodic, "", memory.Private, 1, []string{"e5"}},
		{"bob", tiering.ClassEpisodic, memory.Episodic, "", memory.Private, 1, []string{"e1", "e3"}},
		{"bob", tiering.ClassEpisodic, memory.Episodic, "", memory.Private, 2, []string{"e2"}},
		{"bob", tiering.ClassEpisodic, memory.Episodic, "", memory.Shared, 1, []string{"e4"}},
		{"bob", tiering.ClassPerceptual, memory.Episodic, "heart_rate", memory.Private, 1, []string{"p1"}},
		{"bob", tiering.ClassPerceptual, memory.Perceptual, "heart_rate", memory.Private, 1, []string{"p3"}},
		{"bob", tiering.ClassPerceptual, memory.Perceptual, "steps", memory.Private, 1, []string{"p2"}},
	}
	p := policy(t, tiering.Options{})
	r := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 20; round++ { // the input order does not matter
		r.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
		var got []sig
		for _, g := range p.Select(ms, nil, now) {
			s := sig{g.UserID, g.Class, g.Type, g.Signal, g.Scope, g.Month.Month(), nil}
			for _, it := range g.Items {
				s.ids = append(s.ids, it.ID)
			}
			got = append(got, s)
			if g.Month.Day() != 1 || g.Month.Hour() != 0 || g.Month.Location() != time.UTC {
				t.Fatalf("month %v is not the first instant of a UTC month", g.Month)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d groups:\n got %v\nwant %v", round, got, want)
		}
	}
}

func TestSelectSplitsLargeMonths(t *testing.T) {
	ms := newGen(9, "u").memories(1234, time.Date(2024, 1, 31, 0, 0, 0, 0, time.UTC), 29*day)
	groups := policy(t, tiering.Options{}).Select(ms, nil, now)
	if len(groups) != 3 {
		t.Fatalf("%d groups, want 3 (500 + 500 + 234)", len(groups))
	}
	var last time.Time
	for i, g := range groups {
		if g.Part != i || len(g.Items) != min(500, 1234-500*i) {
			t.Fatalf("group %d: part %d, %d items", i, g.Part, len(g.Items))
		}
		if g.Items[0].OccurredAt.Before(last) {
			t.Fatal("parts overlap in time")
		}
		last = g.Items[len(g.Items)-1].OccurredAt
		if _, err := tiering.Encode(g.Items, g.Meta()); err != nil {
			t.Fatalf("group %d does not encode: %v", i, err)
		}
	}
}

// The access map pins what was read; the rest of the month tiers.
func TestSelectAccessPins(t *testing.T) {
	ms := newGen(10, "u").memories(10, time.Date(2024, 1, 31, 0, 0, 0, 0, time.UTC), 29*day)
	pinned := ms[3].ID
	access := map[string]tiering.AccessStat{pinned: {Recent: []time.Time{now.Add(-time.Hour), now.Add(-day), now.Add(-2 * day)}}}
	groups := policy(t, tiering.Options{}).Select(ms, access, now)
	n := 0
	for _, g := range groups {
		for _, it := range g.Items {
			n++
			if it.ID == pinned {
				t.Fatal("a memory read 3 times this month was tiered")
			}
		}
	}
	if n != 9 {
		t.Fatalf("%d tiered, want 9", n)
	}
}

// Retired facts leave the hot tier by concept, across months: each group is the retired subgraph of one
// concept, and says why it left.
func TestSelectGroupsRetiredFactsByConcept(t *testing.T) {
	fact := func(id, subj, pred, status string, age time.Duration) memory.Memory {
		return mem(id, memory.Semantic, age, map[string]string{memory.MetaFactStatus: status, "subject": subj, "predicate": pred})
	}
	ms := []memory.Memory{
		fact("f1", "user", "lives_in", "superseded", 400*day),
		fact("f2", "user", "lives_in", "superseded", 40*day), // another month, same concept
		fact("f3", "Tom", "is_a", "retracted", 100*day),
		fact("f4", "user", "likes", "superseded", 100*day),
		fact("f5", "user", "likes", "current", 100*day),                                            // current facts stay
		mem("f6", memory.Semantic, 100*day, map[string]string{memory.MetaFactStatus: "retracted"}), // no fact: by month
	}
	var got []string
	for _, g := range policy(t, tiering.Options{}).Select(ms, nil, now) {
		s := g.Concept + ":"
		for _, it := range g.Items {
			s += it.ID
		}
		got = append(got, s+" ("+g.Reason+")")
	}
	want := []string{
		":f6 (retracted facts recorded more than 30d ago)",
		"tom:f3 (retracted facts recorded more than 30d ago)",
		"user.likes:f4 (superseded facts recorded more than 30d ago)",
		"user.lives_in:f1f2 (superseded facts recorded more than 30d ago)",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("groups:\n got %q\nwant %q", got, want)
	}
}
