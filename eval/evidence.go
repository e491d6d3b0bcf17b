package eval

import (
	"regexp"
	"strconv"
	"strings"
)

// diaIDRE matches a dialogue id, tolerating the malformations found in LoCoMo: a stray colon after the D
// ("D:11:26") and zero-padded numbers ("D30:05").
var diaIDRE = regexp.MustCompile(`^D:?(\d+):(\d+)$`)

// NormalizeDiaID returns the canonical form "D<session>:<turn>" of a dialogue id ("D:11:26" → "D11:26",
// "D30:05" → "D30:5"), or false when s is not one ("D", "").
func NormalizeDiaID(s string) (string, bool) {
	m := diaIDRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", false
	}
	sess, err1 := strconv.Atoi(m[1])
	turn, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil {
		return "", false
	}
	return "D" + strconv.Itoa(sess) + ":" + strconv.Itoa(turn), true
}

// NormalizeEvidence splits evidence entries that hold several ids ("D8:6; D9:17", also on commas and white
// space), normalises each with NormalizeDiaID and removes duplicates, keeping first-seen order. Pieces that are
// no dialogue id at all are returned in bad.
func NormalizeEvidence(raw []string) (ids, bad []string) {
	seen := map[string]bool{}
	for _, entry := range raw {
		for _, piece := range strings.FieldsFunc(entry, func(r rune) bool {
			return r == ';' || r == ',' || r == ' ' || r == '\t' || r == '\n'
		}) {
			id, ok := NormalizeDiaID(piece)
			if !ok {
				bad = append(bad, piece)
				continue
			}
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	return ids, bad
}
