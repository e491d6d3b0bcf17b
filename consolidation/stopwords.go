package consolidation

// stopwords are English function words, conversational filler and a few very common
// verbs; they carry no topic, so similarity, tags and summaries ignore them.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range []string{
		"a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are",
		"as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by",
		"can", "could", "did", "do", "does", "doing", "don't", "down", "during", "each", "else", "even",
		"ever", "few", "for", "from", "further", "get", "got", "had", "has", "have", "having", "he", "her",
		"here", "hers", "herself", "him", "himself", "his", "how", "i", "i'd", "i'll", "i'm", "i've",
		"if", "in", "into", "is", "isn't", "it", "it's", "its", "itself", "just", "let", "let's", "like",
		"me", "more", "most", "much", "must", "my", "myself", "no", "nor", "not", "now", "of", "off", "oh",
		"ok", "okay", "on", "once", "one", "only", "or", "other", "our", "ours", "ourselves", "out",
		"over", "own", "please", "really", "same", "she", "should", "so", "some", "such", "sure",
		"than", "thank", "thanks", "that", "that's", "the", "their", "theirs", "them", "themselves",
		"then", "there", "there's", "these", "they", "this", "those", "through", "to", "too", "under",
		"until", "up", "us", "very", "want", "was", "we", "were", "what", "what's", "when", "where",
		"which", "while", "who", "whom", "why", "will", "with", "would", "yeah", "yes", "you", "you're",
		"your", "yours", "yourself", "can't", "won't", "didn't", "doesn't", "wasn't", "weren't", "hi",
		"hello", "hey", "well", "anything", "something", "thing", "things", "need", "know", "think",
		"make", "go", "going", "way", "lot", "still", "maybe", "okay", "right", "great", "good", "cool",
		"next", "moving", "move", "task", "another", "question", "topic", "done",
	} {
		m[w] = true
	}
	return m
}()

// calendarWords are capitalised in English but name times, not entities.
var calendarWords = set("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
	"january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
	"november", "december", "today", "tomorrow", "yesterday")
