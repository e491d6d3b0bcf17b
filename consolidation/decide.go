package consolidation

import (
	"fmt"
	"strings"
	"time"
)

// Op is the decision taken for a candidate (mem0's four operations).
type Op string

// The four operations.
const (
	OpAdd    Op = "ADD"    // a new fact
	OpUpdate Op = "UPDATE" // supersede a contradicted fact with a new one
	OpDelete Op = "DELETE" // retract a fact (no replacement)
	OpNone   Op = "NONE"   // nothing new: a duplicate (confidence raised) or nothing to retract
)

// Decision is the outcome of Decide. Applying it is the caller's job (see Apply): store
// every fact in Changed (replacing the stored version) and New if set.
type Decision struct {
	Op Op `json:"op"`
	// Target is the existing fact the decision is about (superseded, retracted or
	// confirmed); empty for ADD and for a NONE with nothing to act on.
	Target string `json:"target,omitempty"`
	// New is the fact to add (ADD, UPDATE).
	New *Fact `json:"new,omitempty"`
	// Changed are existing facts after the decision: ended (UPDATE, DELETE) or
	// reconfirmed (NONE). Empty when nothing changes.
	Changed []Fact `json:"changed,omitempty"`
	Reason  string `json:"reason"`
}

// IDFunc returns a new unique id for time t (memory.IDSource.New fits). Ids are inputs so
// that decisions are deterministic and can be replayed.
type IDFunc func(t time.Time) string

// opposite predicates contradict each other on the same object.
var opposite = map[string]string{PredLikes: PredDislikes, PredDislikes: PredLikes}

// Decide judges candidate c against the user's existing facts at time now. Rules, in order:
//
//  1. negative candidate: retract (DELETE) the matching current fact; none → NONE;
//  2. the same current fact (predicate and object compare equal) → NONE, confidence
//     raised unless this source was already counted;
//  3. an older statement than the current value → NONE (it must not supersede newer news);
//  4. the opposite predicate on the same object (likes ↔ dislikes) → UPDATE;
//  5. a single-valued predicate with another current value → UPDATE (supersede);
//  6. otherwise → ADD.
func Decide(c Candidate, existing []Fact, now time.Time, newID IDFunc, opts FactOptions) (Decision, error) {
	if err := opts.Validate(); err != nil {
		return Decision{}, err
	}
	if err := c.validate(); err != nil {
		return Decision{}, err
	}
	switch {
	case now.IsZero():
		return Decision{}, fmt.Errorf("%w: decide: now is missing", ErrInvalidInput)
	case newID == nil:
		return Decision{}, fmt.Errorf("%w: decide: no id function", ErrInvalidInput)
	}
	o := opts.withDefaults()
	d := decider{c: c, now: now, newID: newID, o: o, key: objectKey(c.Object)}
	for _, f := range existing {
		if f.Current() && f.Subject == c.Subject {
			d.current = append(d.current, f)
		}
	}
	d.all = existing
	return d.decide(), nil
}

func (c Candidate) validate() error {
	switch {
	case strings.TrimSpace(c.Subject) == "":
		return fmt.Errorf("%w: candidate subject is empty", ErrInvalidInput)
	case strings.TrimSpace(c.Predicate) == "":
		return fmt.Errorf("%w: candidate predicate is empty", ErrInvalidInput)
	case objectKey(c.Object) == "":
		return fmt.Errorf("%w: candidate object is empty", ErrInvalidInput)
	case c.Polarity != Positive && c.Polarity != Negative:
		return fmt.Errorf("%w: candidate polarity %q (want positive or negative)", ErrInvalidInput, c.Polarity)
	}
	return nil
}

type decider struct {
	c       Candidate
	now     time.Time
	newID   IDFunc
	o       FactOptions
	key     string
	current []Fact // the subject's current facts
	all     []Fact
}

func (d decider) decide() Decision {
	same := d.find(d.c.Predicate, true)
	if d.c.Polarity == Negative {
		if same == nil {
			same = d.findNarrower(d.c.Predicate)
		}
		if same == nil {
			return Decision{Op: OpNone, Reason: "nothing to retract: no current " + d.c.Predicate + " " + quote(d.c.Object)}
		}
		return d.retract(*same)
	}
	if same != nil {
		return d.confirm(*same)
	}
	if opp, ok := opposite[d.c.Predicate]; ok {
		if f := d.find(opp, true); f != nil {
			return d.supersede(*f, "contradicts "+f.Predicate+" "+quote(f.Object))
		}
	}
	if !d.o.multiValued(d.c.Predicate) {
		if f := d.find(d.c.Predicate, false); f != nil {
			if d.c.Time.Before(f.ValidFrom) {
				return Decision{Op: OpNone, Target: f.ID, Reason: "older than the current value (valid from " +
					f.ValidFrom.UTC().Format(time.RFC3339) + ")"}
			}
			return d.supersede(*f, d.c.Predicate+" is single-valued: "+quote(f.Object)+" → "+quote(d.c.Object),
				d.others(*f)...)
		}
	}
	return d.add()
}

// find returns the newest current fact with predicate pred whose object equals the
// candidate's (sameObject) or differs from it (!sameObject).
func (d decider) find(pred string, sameObject bool) *Fact {
	var best *Fact
	for i := range d.current {
		f := &d.current[i]
		if f.Predicate != pred || (objectKey(f.Object) == d.key) != sameObject {
			continue
		}
		if best == nil || f.ValidFrom.After(best.ValidFrom) || (f.ValidFrom.Equal(best.ValidFrom) && f.ID > best.ID) {
			best = f
		}
	}
	return best
}

// findNarrower returns the newest current fact whose object is the candidate's object said more precisely:
// "I no longer have a cat" retracts "user has a cat named Tom".
func (d decider) findNarrower(pred string) *Fact {
	var best *Fact
	for i := range d.current {
		f := &d.current[i]
		if f.Predicate == pred && strings.HasPrefix(objectKey(f.Object), d.key+" ") &&
			(best == nil || f.ValidFrom.After(best.ValidFrom)) {
			best = f
		}
	}
	return best
}

func (d decider) add() Decision {
	f := d.newFact(d.o.initial(d.c.Explicit), "new fact")
	return Decision{Op: OpAdd, New: &f, Reason: "new fact"}
}

func (d decider) retract(f Fact) Decision {
	f = cloneFact(f)
	f.ValidTo, f.EndedAt = d.endOf(f), d.now
	f.History = d.o.appendHistory(f.History, Change{At: d.now, Op: OpDelete, Source: d.c.Source,
		Confidence: f.Confidence, Reason: "retracted"})
	return Decision{Op: OpDelete, Target: f.ID, Changed: []Fact{f}, Reason: "retracted by " + sourceName(d.c.Source)}
}

func (d decider) confirm(f Fact) Decision {
	if contains(f.Provenance, d.c.Source) && d.c.Source != "" {
		return Decision{Op: OpNone, Target: f.ID, Reason: "duplicate from a source already counted"}
	}
	f = cloneFact(f)
	gain, why := d.o.RepeatGain, "repeated"
	if d.c.Explicit {
		gain, why = d.o.ConfirmGain, "explicitly confirmed"
	}
	f.Confidence = d.o.raise(f.Confidence, gain)
	f.Provenance = d.o.appendProvenance(f.Provenance, d.c.Source)
	f.History = d.o.appendHistory(f.History, Change{At: d.now, Op: OpNone, Source: d.c.Source,
		Confidence: f.Confidence, Reason: why})
	return Decision{Op: OpNone, Target: f.ID, Changed: []Fact{f}, Reason: "duplicate: " + why}
}

// others returns the other current values of a single-valued predicate (left by data
// written under another policy); a supersession ends them too, so one value stays current.
func (d decider) others(newest Fact) []Fact {
	var out []Fact
	for _, f := range d.current {
		if f.Predicate == newest.Predicate && f.ID != newest.ID && objectKey(f.Object) != d.key {
			out = append(out, f)
		}
	}
	return out
}

// supersede ends old (and also, if given, further stale values) in favour of a new fact.
func (d decider) supersede(old Fact, why string, also ...Fact) Decision {
	conf, churn := d.o.afterChurn(d.o.initial(d.c.Explicit), d.changesWithin(old))
	if churn > 0 {
		why += fmt.Sprintf(" (%d recent change(s) lower confidence)", churn)
	}
	nf := d.newFact(conf, why)
	nf.History[0].Related = old.ID
	var changed []Fact
	for _, f := range append([]Fact{old}, also...) {
		f = cloneFact(f)
		f.ValidTo, f.EndedAt, f.SupersededBy = d.endOf(f), d.now, nf.ID
		f.History = d.o.appendHistory(f.History, Change{At: d.now, Op: OpUpdate, Source: d.c.Source,
			Related: nf.ID, Confidence: f.Confidence, Reason: "superseded"})
		changed = append(changed, f)
	}
	return Decision{Op: OpUpdate, Target: old.ID, New: &nf, Changed: changed, Reason: why}
}

// changesWithin counts supersessions of the subject's same predicate within ChurnWindow
// before now, the one about to happen included: a value that keeps changing is less certain.
func (d decider) changesWithin(old Fact) int {
	n := 1
	for _, f := range d.all {
		if f.Subject == old.Subject && f.Predicate == old.Predicate && f.SupersededBy != "" &&
			d.now.Sub(f.ValidTo) < d.o.ChurnWindow {
			n++
		}
	}
	return n
}

func (d decider) newFact(conf float64, why string) Fact {
	from := d.c.Time
	if from.IsZero() {
		from = d.now
	}
	f := Fact{ID: d.newID(d.now), Subject: d.c.Subject, Predicate: d.c.Predicate, Object: d.c.Object,
		Statement: d.c.Statement, ValidFrom: from, RecordedAt: d.now, Confidence: conf}
	if f.Statement == "" {
		f.Statement = statement(f.Subject, f.Predicate, f.Object, false)
	}
	f.Provenance = d.o.appendProvenance(nil, d.c.Source)
	f.History = []Change{{At: d.now, Op: OpAdd, Source: d.c.Source, Confidence: conf, Reason: why}}
	return f
}

// endOf is when f stopped being true: the candidate's event time (a message's or a request's --time), not
// when it was processed; never before f began, so the interval stays well formed.
func (d decider) endOf(f Fact) time.Time {
	at := d.c.Time
	if at.IsZero() || at.After(d.now) {
		at = d.now
	}
	if at.Before(f.ValidFrom) {
		at = f.ValidFrom
	}
	return at
}

func cloneFact(f Fact) Fact {
	f.Provenance = append([]string(nil), f.Provenance...)
	f.History = append([]Change(nil), f.History...)
	return f
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func quote(s string) string { return `"` + s + `"` }

func sourceName(s string) string {
	if s == "" {
		return "an unnamed source"
	}
	return s
}
