package consolidation

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// benchConversation is n turns shaped like memctl bench session's: user turns state where they live, what they
// like, plans and small talk; assistant turns are a few sentences of prose.
func benchConversation(rng *rand.Rand, n int, at time.Time) []Message {
	cities := []string{"Berlin", "Lisbon", "Tokyo", "Oslo", "Nairobi", "Toronto", "Seoul", "Melbourne"}
	likes := []string{"green tea", "jazz", "hiking", "sourdough bread", "chess", "sushi", "the violin", "yoga"}
	prose := []string{
		"That sounds like a good plan, and I can help you prepare the details before the weekend.",
		"The quarterly report is due on Friday, so it may help to start with the budget review first.",
		"I looked at the options and the morning train is faster than the flight once you count the airport.",
		"Your last message mentioned the database migration; the rollback plan should cover the old schema.",
		"Here are three recipes that use what you have at home, none of them takes more than thirty minutes.",
		"The museum opens at ten on weekdays and the tickets are cheaper if you book them online in advance.",
	}
	msgs := make([]Message, n)
	for i := range msgs {
		m := Message{ID: fmt.Sprintf("m%d", i), Role: RoleAssistant, Time: at.Add(time.Duration(i) * time.Minute)}
		if i%2 == 1 {
			m.Content = prose[rng.IntN(len(prose))] + " " + prose[rng.IntN(len(prose))]
			msgs[i] = m
			continue
		}
		m.Role = RoleUser
		switch rng.IntN(5) {
		case 0:
			m.Content = "I live in " + cities[rng.IntN(len(cities))] + " now."
		case 1:
			m.Content = "I really like " + likes[rng.IntN(len(likes))] + "."
		case 2:
			m.Content = "Thanks, that helps a lot!"
		case 3:
			m.Content = "Please book a morning flight to " + cities[rng.IntN(len(cities))] + " for Friday."
		default:
			m.Content = strings.ToLower(prose[rng.IntN(len(prose))][:1]) + prose[rng.IntN(len(prose))][1:]
		}
		msgs[i] = m
	}
	return msgs
}

// BenchmarkConsolidatorRun is one flush of a 20-turn window against a user with a few facts, as the write
// path runs it on the node that takes the flush.
func BenchmarkConsolidatorRun(b *testing.B) {
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(1, 2))
	convs := make([][]Message, 64)
	for i := range convs {
		convs[i] = benchConversation(rng, 20, at)
	}
	existing, err := Consolidator{NewID: seqIDs()}.Run(convs[0], nil, at.Add(time.Hour))
	if err != nil {
		b.Fatal(err)
	}
	c := Consolidator{NewID: seqIDs()}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Run(convs[i%len(convs)], existing.Facts, at.Add(time.Hour)); err != nil {
			b.Fatal(err)
		}
	}
}

// The shortcuts Run takes with the defaults (the built-in extraction shared with the episodes' importance, the
// lexical similarity scored from cached words) change nothing: a run that names the same functions, and so
// takes the general paths, reports the same episodes, decisions and rejections.
func TestRunShortcutsReportTheSame(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(5, 8))
	general := Options{}
	general.Segment.Similarity = LexicalSimilarity
	shifts := 0
	for i := 0; i < 200; i++ {
		msgs := benchConversation(rng, 4+rng.IntN(30), at)
		if i%3 == 0 { // a topic change the windows must find
			msgs = append(msgs, conv(msgs[len(msgs)-1].Time.Add(time.Minute),
				"user: switching gears entirely, my daughter's violin recital and the school concert schedule",
				"assistant: the recital schedule lists the violin pieces and the concert hall seating plan",
				"user: remember that the recital rehearsal is on Thursday, it's important")...)
		}
		fast, err := Consolidator{NewID: seqIDs()}.Run(msgs, nil, at.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		slow, err := Consolidator{Options: general, NewID: seqIDs(), Extract: Extract}.Run(msgs, nil, at.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("conversation %d: the default run differs from the general one:\n%+v\n%+v", i, fast, slow)
		}
		for _, e := range fast.Episodes {
			if e.Boundary == BoundaryTopic {
				shifts++
			}
		}
	}
	if shifts == 0 {
		t.Fatal("no topic shift in any conversation: the windows' scores were not compared")
	}
}
