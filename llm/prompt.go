package llm

import (
	"fmt"
	"strings"

	c "github.com/memcluster/memcluster/consolidation"
)

// vocabulary is the predicate set of the rule-based extractor, so an LLM-extracted fact
// and a rule-extracted one land on the same predicate and Decide can compare them.
var vocabulary = []struct{ pred, use string }{
	{c.PredName, `the user's name ("I'm Ana", "call me Ana")`},
	{c.PredAge, `age in years, object the number ("I'm 34")`},
	{c.PredLivesIn, `where the user lives now ("I live in / moved to / am based in Berlin")`},
	{c.PredFrom, `where the user comes from or grew up`},
	{c.PredWorksAt, `employer ("I work at / for / joined Acme")`},
	{c.PredOccupation, `job ("I work as a nurse", "my job is ...")`},
	{c.PredIsA, `a lasting trait or role ("I'm a teacher", "I'm vegetarian", "I'm married")`},
	{c.PredLikes, `likes, loves, enjoys; one fact per item of a list`},
	{c.PredDislikes, `dislikes, hates, can't stand, "I don't like X" (a positive fact)`},
	{c.PredPrefers, `preferences ("I prefer morning flights")`},
	{c.PredSpeaks, `languages`},
	{c.PredAllergicTo, `allergies`},
	{c.PredHas, `possessions, pets, family ("I have a cat named Tom")`},
	{c.PredNote, `an explicit "remember that ..." matching no other predicate; object the whole note`},
}

// systemPrompt is sent with every message; it is fixed so a provider's prompt cache hits.
var systemPrompt = buildPrompt()

func buildPrompt() string {
	var b strings.Builder
	b.WriteString(`You extract durable facts about the user from ONE chat message the user wrote.
Answer with a single JSON object and nothing else, exactly this shape:
{"facts":[{"subject":"user","predicate":"lives_in","object":"Berlin","statement":"user lives in Berlin","polarity":"positive","explicit":false}],
 "rejected":[{"sentence":"I'm so tired today","reason":"transient"}]}

Facts:
- A fact is a stable, reusable assertion. subject is "user" for the user; for another person the user names, that name.
- predicate is snake_case. Use this vocabulary whenever it fits:
`)
	for _, v := range vocabulary {
		fmt.Fprintf(&b, "  %s: %s\n", v.pred, v.use)
	}
	b.WriteString(`  For "my X is Y" the predicate is X in snake_case (favorite_color, sister_birthday) and the object is Y.
- object is the value only, short, as the user wrote it ("Berlin", "green tea"), without a leading article.
- statement is one short third-person sentence ("user lives in Berlin", "user's favorite color is green").
- polarity is "negative" only when the user retracts or denies a fact ("I no longer live in Berlin", "I don't work at Acme"
  anymore); the object is the value retracted. Everything else is "positive".
- explicit is true only when the user asks to remember it ("remember that ...", "don't forget ..."); otherwise false.
- At most 20 facts. Every fact has all six keys. No other keys anywhere.

Rejected: sentences that state no durable fact, each with one reason:
- question: a question or a request; small_talk: greetings, thanks, acknowledgements;
- transient: a passing state ("I'm tired right now", "busy today"); hedged: a guess, plan or wish ("maybe", "I might", "I'd like to").
Sentences that are neither facts nor one of these are left out. If nothing qualifies answer {"facts":[],"rejected":[]}.
`)
	return b.String()
}
