package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/memcluster/memcluster/consolidation"
)

// Bounds on one message's extraction. Anything beyond them is a schema violation: a model
// that answers 40 facts for one message is not extracting, it is rambling.
const (
	maxFacts        = 20
	maxRejected     = 50
	maxSubjectRunes = 100
	maxObjectRunes  = 500 // the rules' bound on an explicit note
	maxTextRunes    = 1000
)

var predicateRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// wireOutput is the model's answer. Pointers tell a missing key from a zero value.
type wireOutput struct {
	Facts    *[]wireFact     `json:"facts"`
	Rejected []wireRejection `json:"rejected"` // optional: an omitted empty list is not ambiguous
}

type wireFact struct {
	Subject   *string `json:"subject"`
	Predicate *string `json:"predicate"`
	Object    *string `json:"object"`
	Statement *string `json:"statement"`
	Polarity  *string `json:"polarity"`
	Explicit  *bool   `json:"explicit"`
}

type wireRejection struct {
	Sentence *string `json:"sentence"`
	Reason   *string `json:"reason"`
}

var rejectReasons = map[string]bool{consolidation.RejectQuestion: true, consolidation.RejectSmallTalk: true,
	consolidation.RejectTransient: true, consolidation.RejectHedged: true}

// parse decodes and validates one answer for message m. Any violation rejects the whole
// answer: a partly wrong extraction is not trusted for the rest either.
func parse(content string, m consolidation.Message) ([]consolidation.Candidate, []consolidation.Rejection, error) {
	out, err := decodeStrict(content)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case out.Facts == nil:
		return nil, nil, fmt.Errorf("%w: facts is missing", ErrSchema)
	case len(*out.Facts) > maxFacts:
		return nil, nil, fmt.Errorf("%w: %d facts, at most %d", ErrSchema, len(*out.Facts), maxFacts)
	case len(out.Rejected) > maxRejected:
		return nil, nil, fmt.Errorf("%w: %d rejected sentences, at most %d", ErrSchema, len(out.Rejected), maxRejected)
	}
	cands := make([]consolidation.Candidate, 0, len(*out.Facts))
	for i, f := range *out.Facts {
		c, err := f.candidate(m.ID, m.Time)
		if err != nil {
			return nil, nil, fmt.Errorf("fact %d: %w", i, err)
		}
		cands = append(cands, c)
	}
	var rejs []consolidation.Rejection
	for i, r := range out.Rejected {
		rj, err := r.rejection(m.ID)
		if err != nil {
			return nil, nil, fmt.Errorf("rejected %d: %w", i, err)
		}
		rejs = append(rejs, rj)
	}
	return cands, rejs, nil
}

// decodeStrict reads exactly one JSON object with no unknown keys and nothing after it.
func decodeStrict(content string) (wireOutput, error) {
	var out wireOutput
	dec := json.NewDecoder(strings.NewReader(content))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return out, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		return out, fmt.Errorf("%w: %v", ErrSchema, err) // unknown key, wrong type, not an object
	}
	if _, err := dec.Token(); err != io.EOF {
		return out, fmt.Errorf("%w: data after the JSON object", ErrMalformed)
	}
	return out, nil
}

func (f wireFact) candidate(source string, at time.Time) (consolidation.Candidate, error) {
	for _, req := range []struct {
		name string
		ok   bool
	}{{"subject", f.Subject != nil}, {"predicate", f.Predicate != nil}, {"object", f.Object != nil},
		{"statement", f.Statement != nil}, {"polarity", f.Polarity != nil}, {"explicit", f.Explicit != nil}} {
		if !req.ok {
			return consolidation.Candidate{}, fmt.Errorf("%w: %s is missing", ErrSchema, req.name)
		}
	}
	c := consolidation.Candidate{Subject: squash(*f.Subject), Predicate: *f.Predicate,
		Object: squash(*f.Object), Statement: squash(*f.Statement),
		Polarity: consolidation.Polarity(*f.Polarity), Explicit: *f.Explicit, Source: source, Time: at}
	if strings.EqualFold(c.Subject, consolidation.SubjectUser) {
		c.Subject = consolidation.SubjectUser
	}
	if err := checkCandidate(c); err != nil {
		return consolidation.Candidate{}, err
	}
	return c, nil
}

// firstPerson subjects mean the model did not resolve the speaker to "user".
var firstPerson = map[string]bool{"i": true, "me": true, "my": true, "myself": true}

func checkCandidate(c consolidation.Candidate) error {
	if err := checkText("subject", c.Subject, maxSubjectRunes); err != nil {
		return err
	}
	if err := checkText("object", c.Object, maxObjectRunes); err != nil {
		return err
	}
	if err := checkText("statement", c.Statement, maxTextRunes); err != nil {
		return err
	}
	switch {
	case firstPerson[strings.ToLower(c.Subject)]:
		return fmt.Errorf("%w: subject %q (want \"user\" or a name)", ErrSchema, c.Subject)
	case !predicateRe.MatchString(c.Predicate):
		return fmt.Errorf("%w: predicate %q is not snake_case (^[a-z][a-z0-9_]{0,63}$)", ErrSchema, c.Predicate)
	case c.Predicate == consolidation.PredPattern:
		return fmt.Errorf("%w: predicate %q is reserved for promoted patterns", ErrSchema, c.Predicate)
	case c.Polarity != consolidation.Positive && c.Polarity != consolidation.Negative:
		return fmt.Errorf("%w: polarity %q (want positive or negative)", ErrSchema, c.Polarity)
	}
	// Decide is the judge of what a candidate must hold (an object that is only an article
	// fails it, say); a dry run against no facts applies exactly its checks, so a candidate
	// that passes here cannot fail the consolidation later.
	if _, err := consolidation.Decide(c, nil, dryRunTime, func(time.Time) string { return "dry-run" },
		consolidation.FactOptions{}); err != nil {
		return fmt.Errorf("%w: %v", ErrSchema, err)
	}
	return nil
}

func (r wireRejection) rejection(source string) (consolidation.Rejection, error) {
	switch {
	case r.Sentence == nil:
		return consolidation.Rejection{}, fmt.Errorf("%w: sentence is missing", ErrSchema)
	case r.Reason == nil:
		return consolidation.Rejection{}, fmt.Errorf("%w: reason is missing", ErrSchema)
	case !rejectReasons[*r.Reason]:
		return consolidation.Rejection{}, fmt.Errorf("%w: reason %q (want question, small_talk, transient or hedged)",
			ErrSchema, *r.Reason)
	}
	s := squash(*r.Sentence)
	if err := checkText("sentence", s, maxTextRunes); err != nil {
		return consolidation.Rejection{}, err
	}
	return consolidation.Rejection{Sentence: s, Reason: *r.Reason, Source: source}, nil
}

var dryRunTime = time.Unix(0, 0).UTC()

// squash trims and collapses runs of white space (a sentence copied across a line break).
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// checkText wants a trimmed, non-empty, bounded single line without control characters.
func checkText(field, s string, maxRunes int) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: %s is empty", ErrSchema, field)
	case utf8.RuneCountInString(s) > maxRunes:
		return fmt.Errorf("%w: %s longer than %d characters", ErrSchema, field, maxRunes)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return fmt.Errorf("%w: %s contains control characters", ErrSchema, field)
	}
	return nil
}
