package consolidation

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)

// brief renders Extract's output compactly: "pred=obj" per candidate ("!pred=obj" for a
// negative one, "+" prefix for explicit), "reject:reason" per rejection.
func brief(cands []Candidate, rejs []Rejection) string {
	var parts []string
	for _, c := range cands {
		p := c.Predicate + "=" + c.Object
		if c.Polarity == Negative {
			p = "!" + p
		}
		if c.Explicit {
			p = "+" + p
		}
		parts = append(parts, p)
	}
	for _, r := range rejs {
		parts = append(parts, "reject:"+r.Reason)
	}
	return strings.Join(parts, " ")
}

func TestExtract(t *testing.T) {
	tests := []struct{ in, want string }{
		// facts
		{"I am a software engineer at Google.", "is_a=a software engineer"},
		{"My name is Ada Lovelace.", "name=Ada Lovelace"},
		{"Call me Bob", "name=Bob"},
		{"I'm 34 years old", "age=34"},
		{"I live in Berlin with my wife.", "lives_in=Berlin"},
		{"I moved to Paris last month", "lives_in=Paris"},
		{"I've just moved to Lisbon!", "lives_in=Lisbon"},
		{"Today I moved to Berlin", "lives_in=Berlin"},
		{"I am from Spain originally", "from=Spain"},
		{"I work at Acme Corp as an engineer", "works_at=Acme Corp"},
		{"Ok, so I work for Stripe now.", "works_at=Stripe"},
		{"I work as a nurse", "occupation=nurse"},
		{"I like tea, coffee and jazz.", "likes=tea likes=coffee likes=jazz"},
		{"I love hiking in the Alps", "likes=hiking in the Alps"},
		{"I prefer aisle seats", "prefers=aisle seats"},
		{"I hate cilantro", "dislikes=cilantro"},
		{"I don't like olives", "dislikes=olives"},
		{"Btw I speak English and French", "speaks=English speaks=French"},
		{"I'm vegetarian", "is_a=vegetarian"},
		{"I have a cat named Tom.", "has=cat named Tom"},
		{"I've got two kids", ""},
		{"I no longer have a cat", "!has=cat"},
		{"My favourite colour is blue.", "favorite_color=blue"},
		{"My wife is Anna", "wife=Anna"},
		{"I'm tired today but I work at Acme.", "works_at=Acme reject:transient"},
		// explicit
		{"Remember that my sister's birthday is June 3", "+sister_birthday=June 3"},
		{"Please remember I'm allergic to peanuts and shellfish", "+allergic_to=peanuts +allergic_to=shellfish"},
		{"Remember to buy milk", "+note=to buy milk"},
		{"Remember that I live in Porto and I work at Acme", "+lives_in=Porto +works_at=Acme"},
		// retractions and negations
		{"I no longer live in Berlin", "!lives_in=Berlin"},
		{"I don't like sushi anymore", "!likes=sushi"},
		{"I'm not a vegetarian anymore", "!is_a=a vegetarian"},
		{"I don't live in Paris", "!lives_in=Paris"},
		{"My favourite colour isn't red", "!favorite_color=red"},
		// the gate
		{"I'm tired right now", "reject:transient"},
		{"Today I'm busy", "reject:transient"},
		{"I'm hungry", "reject:transient"},
		{"At the moment I'm in a meeting", "reject:transient"},
		{"my head is killing me", "reject:transient"},
		{"I'm working on the report today", "reject:transient"},
		{"Hi!", "reject:small_talk"},
		{"Thanks a lot!", "reject:small_talk"},
		{"What's the weather like?", "reject:question"},
		{"Can you book a flight to Paris", "reject:question"},
		{"How are you", "reject:question"},
		{"I might move to Paris", "reject:hedged"},
		{"I think I like jazz", "reject:hedged"},
		// nothing durable, nothing rejected
		{"When I lived in Rome I was happy", ""},
		{"The build is green again", ""},
	}
	for _, tt := range tests {
		c, r := Extract(Message{ID: "m1", Role: RoleUser, Content: tt.in, Time: t0})
		if got := brief(c, r); got != tt.want {
			t.Errorf("Extract(%q) = %q, want %q", tt.in, got, tt.want)
		}
		for _, x := range c {
			if x.Source != "m1" || !x.Time.Equal(t0) || x.Subject != SubjectUser || x.Statement == "" {
				t.Errorf("Extract(%q): candidate %+v lacks source, time, subject or statement", tt.in, x)
			}
		}
	}
}

func TestExtractIgnoresOtherRoles(t *testing.T) {
	for _, role := range []Role{RoleAssistant, RoleTool} {
		c, r := Extract(Message{Role: role, Content: "I live in Berlin.", Time: t0})
		if len(c)+len(r) != 0 {
			t.Errorf("role %s: got %s, want nothing", role, brief(c, r))
		}
	}
}

func TestRemember(t *testing.T) {
	c, r, err := Remember("I'm tired today. Where do I live?", "r1", t0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := brief(c, r), "reject:transient reject:question"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	long := strings.Repeat("word ", 120)
	if c, r, _ := Remember(long, "r2", t0); brief(c, r) != "reject:too_long" {
		t.Errorf("long note: got %q", brief(c, r))
	}
	for _, bad := range []struct {
		text string
		at   time.Time
	}{{"  ", t0}, {"x", time.Time{}}} {
		if _, _, err := Remember(bad.text, "r", bad.at); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("Remember(%q, %v) err = %v, want ErrInvalidInput", bad.text, bad.at, err)
		}
	}
}
