package embed

import "strings"

// stopwords are common English function words; their features are
// down-weighted, not dropped, so "to be or not to be" still embeds.
// Changing this list changes vectors: bump "sw1" in the Hashed fingerprint.
const stopwords = `a about above after again against all am an and any are as at be because been
before being below between both but by can could did do does doing don down during each few for
from further had has have having he her here hers herself him himself his how i if in into is it
its itself just ll me more most my myself no nor not now of off on once only or other our ours
ourselves out over own re s same she should so some such t than that the their theirs them
themselves then there these they this those through to too under until up ve very was we were
what when where which while who whom why will with would you your yours yourself yourselves`

// stopwordSet returns the unigram hashes of the stopwords.
func stopwordSet() map[uint64]struct{} {
	words := strings.Fields(stopwords)
	set := make(map[uint64]struct{}, len(words))
	for _, w := range words {
		set[wordHash([]rune(w))] = struct{}{}
	}
	return set
}
