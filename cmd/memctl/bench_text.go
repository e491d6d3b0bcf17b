package main

import (
	"math/rand/v2"
	"strings"
)

// The bench texts read like what agents store about their users: sentences
// built from templates whose slots draw on a few hundred everyday words, so
// embeddings differ from memory to memory and BM25 sees real term
// frequencies. Slot words are drawn with a skew (some are common, most rare),
// as in real text.

var benchNames = []string{
	"Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy", "Mallory", "Niaj",
	"Olivia", "Peggy", "Rupert", "Sybil", "Trent", "Victor", "Walter", "Yusuf", "Zoe", "Priya", "Kenji", "Lucia",
	"Mateo", "Ingrid", "Amara", "Tomasz", "Leila", "Santiago", "Mei", "Omar",
}

var benchTopics = []string{
	"coffee", "green tea", "jazz", "hiking", "sourdough bread", "chess", "photography", "gardening", "running",
	"the quarterly report", "the database migration", "Kubernetes", "machine learning", "the budget review",
	"Italian food", "sushi", "vegetarian recipes", "the new laptop", "the mechanical keyboard", "podcasts",
	"science fiction novels", "the piano", "yoga", "cycling", "rock climbing", "board games", "the garden shed",
	"the pull request", "the onboarding document", "the customer escalation", "the flight to Lisbon",
	"the hotel booking", "the dentist appointment", "the birthday party", "the wedding", "the marathon",
	"the conference talk", "the security audit", "the mortgage", "the car insurance", "the electricity bill",
	"the tax return", "the apartment lease", "the dog", "the cat", "the kids' school", "the swimming lessons",
	"the Rust rewrite", "the Go service", "the latency regression", "the on-call rotation", "the design review",
	"the product launch", "the marketing plan", "the sales forecast", "the team offsite", "the performance review",
	"spicy food", "dark chocolate", "red wine", "craft beer", "oat milk", "gluten-free pasta", "the farmers market",
	"the museum", "the concert", "the football match", "the tennis club", "the book club", "the language course",
	"Spanish lessons", "Japanese grammar", "the violin", "watercolor painting", "woodworking", "the sailing trip",
	"the camping gear", "the electric bike", "the solar panels", "the heat pump", "the kitchen renovation",
}

var benchPlaces = []string{
	"Berlin", "Lisbon", "Tokyo", "New York", "Nairobi", "São Paulo", "Toronto", "Seoul", "Melbourne", "Oslo",
	"the office", "home", "the cafe downstairs", "the gym", "the airport", "the train", "the library",
	"the coworking space", "the client site", "the lake house", "the mountains", "the beach", "the park",
}

var benchWhen = []string{
	"yesterday", "last week", "this morning", "on Monday", "on Friday evening", "every weekend", "since January",
	"two days ago", "at lunch", "before the standup", "after the meeting", "during the holidays", "last spring",
	"most evenings", "once a month", "next Tuesday", "tomorrow", "in March", "over the summer", "at night",
}

var benchFeel = []string{
	"loves", "dislikes", "prefers", "is curious about", "is worried about", "is excited about", "is tired of",
	"wants to learn more about", "keeps forgetting", "asked for help with", "finished", "started",
	"complained about", "recommended", "postponed", "is allergic to", "cannot stand", "enjoys",
}

var benchAdj = []string{
	"urgent", "important", "expensive", "cheap", "slow", "fast", "difficult", "easy", "boring", "fun",
	"stressful", "relaxing", "late", "early", "unexpected", "overdue", "promising", "confusing", "noisy", "quiet",
}

var benchVerbs = []string{
	"mentioned", "said", "noted", "explained", "confirmed", "decided", "remembered", "admitted", "suggested",
	"reported", "agreed", "asked the agent to remember",
}

// benchTemplates: %N name, %T topic, %P place, %W when, %F feeling, %A
// adjective, %V reporting verb.
var benchTemplates = []string{
	"%N %F %T.",
	"%N %V that %T was %A %W.",
	"%W %N was in %P working on %T.",
	"%N %V they %F %T and %T.",
	"Reminder: %T is %A, follow up with %N %W.",
	"%N %V the meeting about %T moved to %P.",
	"%N usually goes to %P %W for %T.",
	"%N %V that %T in %P felt %A.",
	"The agent booked %T for %N in %P %W.",
	"%N %F %T but not %T.",
	"%N %V %T should be done %W because it is %A.",
	"Preference: %N %F %T, especially in %P.",
}

// benchPick draws from list with a skew towards its start: the minimum of two
// uniform draws makes the first entries twice as likely as the average one
// and the last ones rare.
func benchPick(rng *rand.Rand, list []string) string {
	i := rng.IntN(len(list))
	if j := rng.IntN(len(list)); j < i {
		i = j
	}
	return list[i]
}

// benchSentence appends one filled-in template to b.
func benchSentence(b *strings.Builder, rng *rand.Rand) {
	t := benchTemplates[rng.IntN(len(benchTemplates))]
	for i := 0; i < len(t); i++ {
		if t[i] != '%' || i+1 == len(t) {
			b.WriteByte(t[i])
			continue
		}
		i++
		switch t[i] {
		case 'N':
			b.WriteString(benchPick(rng, benchNames))
		case 'T':
			b.WriteString(benchPick(rng, benchTopics))
		case 'P':
			b.WriteString(benchPick(rng, benchPlaces))
		case 'W':
			b.WriteString(benchPick(rng, benchWhen))
		case 'F':
			b.WriteString(benchPick(rng, benchFeel))
		case 'A':
			b.WriteString(benchPick(rng, benchAdj))
		case 'V':
			b.WriteString(benchPick(rng, benchVerbs))
		default:
			b.WriteByte('%')
			b.WriteByte(t[i])
		}
	}
}

// benchText returns sentences of about size bytes: at most size, cut at a
// word boundary, and never empty. A template starting with a lower-case slot
// ("%W") is capitalised.
func benchText(rng *rand.Rand, size int) string {
	var b, sent strings.Builder
	b.Grow(size + 128)
	for b.Len() < size {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		sent.Reset()
		benchSentence(&sent, rng)
		s := sent.String()
		if s[0] >= 'a' && s[0] <= 'z' {
			b.WriteByte(s[0] - 'a' + 'A')
			s = s[1:]
		}
		b.WriteString(s)
	}
	s := b.String()
	if len(s) <= size {
		return s
	}
	cut := strings.LastIndexByte(s[:size+1], ' ')
	if cut <= 0 {
		// One word longer than size: cut bytes, backing off to a rune boundary.
		cut = size
		for cut > 1 && s[cut]&0xC0 == 0x80 {
			cut--
		}
	}
	return strings.TrimRight(s[:cut], " ,")
}

// benchQuery returns a search query in one of the ways agents ask: a
// question, a few keywords, or a name with a topic.
func benchQuery(rng *rand.Rand) string {
	switch rng.IntN(4) {
	case 0:
		return "what does " + benchPick(rng, benchNames) + " think about " + benchPick(rng, benchTopics)
	case 1:
		return benchPick(rng, benchTopics) + " " + benchPick(rng, benchPlaces) + " " + benchPick(rng, benchWhen)
	case 2:
		return benchPick(rng, benchNames) + " " + benchPick(rng, benchTopics)
	default:
		return "when is " + benchPick(rng, benchTopics) + " " + benchPick(rng, benchAdj)
	}
}
