package tiering

import (
	"fmt"
	"math"
	"time"

	"github.com/memcluster/memcluster/memory"
)

const day = 24 * time.Hour

// Options decide what leaves the hot tier. Zero fields take the defaults named beside them.
type Options struct {
	// EpisodicHotFor keeps an episodic memory hot this long after it occurred and was written (the later of
	// OccurredAt and CreatedAt). Default 90 days.
	EpisodicHotFor time.Duration
	// PinImportance keeps an episodic memory of at least this importance hot for good. Default 0.8.
	PinImportance float64
	// PinAccesses keeps an episodic memory hot while it was read at least this many times within
	// AccessWindow before now. Default 3.
	PinAccesses int
	// AccessWindow is the window PinAccesses counts in. Default 30 days.
	AccessWindow time.Duration
	// PerceptualHotFor keeps perceptual memories (type perceptual, or made by the perceptual path:
	// Metadata["source"] == "perceptual") hot this long. Default 7 days.
	PerceptualHotFor time.Duration
	// RetiredFactHotFor keeps a semantic memory whose fact is superseded or retracted hot this long after it
	// was recorded (CreatedAt). Current facts never tier. Default 30 days.
	RetiredFactHotFor time.Duration
	// OlderThan, when set, replaces the three ages above for one run (the operator's `tier run
	// --older-than 180d`): every tierable memory that occurred longer ago than this tiers (by OccurredAt alone,
	// so imported history counts by its events' age), under the same rules otherwise
	// (pins hold, current facts and working memory stay). Default 0: off. At least MinOlderThan.
	OlderThan time.Duration
	// MaxItems bounds the items of one group, hence of one segment. Default 500.
	MaxItems int
}

// MinOlderThan is the smallest OlderThan Validate accepts: a unit typo ("180s" for "180d") must not tier a
// user's whole history.
const MinOlderThan = day

// DefaultOptions are the options with every default filled in.
var DefaultOptions = Options{
	EpisodicHotFor:    90 * day,
	PinImportance:     0.8,
	PinAccesses:       3,
	AccessWindow:      30 * day,
	PerceptualHotFor:  7 * day,
	RetiredFactHotFor: 30 * day,
	MaxItems:          500,
}

// WithDefaults returns o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	d := DefaultOptions
	setDur(&o.EpisodicHotFor, d.EpisodicHotFor)
	setDur(&o.AccessWindow, d.AccessWindow)
	setDur(&o.PerceptualHotFor, d.PerceptualHotFor)
	setDur(&o.RetiredFactHotFor, d.RetiredFactHotFor)
	if o.PinImportance == 0 {
		o.PinImportance = d.PinImportance
	}
	if o.PinAccesses == 0 {
		o.PinAccesses = d.PinAccesses
	}
	if o.MaxItems == 0 {
		o.MaxItems = d.MaxItems
	}
	return o
}

func setDur(v *time.Duration, def time.Duration) {
	if *v == 0 {
		*v = def
	}
}

// Validate names the first option that is out of range.
func (o Options) Validate() error {
	o = o.WithDefaults()
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%w: tiering option %s: %s", ErrInvalid, field, fmt.Sprintf(format, args...))
	}
	switch {
	case o.EpisodicHotFor < 0 || o.AccessWindow < 0 || o.PerceptualHotFor < 0 || o.RetiredFactHotFor < 0:
		return bad("durations", "must not be negative")
	case math.IsNaN(o.PinImportance) || o.PinImportance < 0 || o.PinImportance > 1:
		return bad("PinImportance", "%v not in [0, 1]", o.PinImportance)
	case o.PinAccesses < 0:
		return bad("PinAccesses", "%d is negative", o.PinAccesses)
	case o.OlderThan < 0 || o.OlderThan > 0 && o.OlderThan < MinOlderThan:
		return bad("OlderThan", "%v (want 0 for off, or at least %v)", o.OlderThan, MinOlderThan)
	case o.MaxItems < 0 || o.MaxItems > DefaultDecodeLimits.MaxItems:
		return bad("MaxItems", "%d not in [1, %d]", o.MaxItems, DefaultDecodeLimits.MaxItems)
	}
	return nil
}

// AccessStat is what the caller knows about the reads of one memory. Keeping the last PinAccesses read
// times per memory is enough for the policy.
type AccessStat struct {
	Recent []time.Time `json:"recent,omitempty"`
}

// countSince counts the reads at or after t.
func (a AccessStat) countSince(t time.Time) int {
	n := 0
	for _, r := range a.Recent {
		if !r.Before(t) {
			n++
		}
	}
	return n
}

// Policy decides which memories leave the hot tier. It is pure: the clock and the access statistics are
// inputs, so every replica (or a test) deciding with the same inputs gets the same groups.
type Policy struct {
	o Options
}

// NewPolicy validates o and returns a policy with its defaults filled in.
func NewPolicy(o Options) (*Policy, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return &Policy{o: o.WithDefaults()}, nil
}

// Options returns the policy's options, defaults filled in.
func (p *Policy) Options() Options { return p.o }

// Decide reports whether m leaves the hot tier at now, with the reason (for logs and dry runs).
func (p *Policy) Decide(m *memory.Memory, a AccessStat, now time.Time) (bool, string) {
	c, ok := ClassOf(m)
	if !ok {
		return false, "never tiers (working memory, unknown type or an archive entry)"
	}
	age, hot := now.Sub(latest(m.OccurredAt, m.CreatedAt)), p.o.EpisodicHotFor
	switch c {
	case ClassPerceptual:
		hot = p.o.PerceptualHotFor
	case ClassSemantic:
		if st := m.Metadata[memory.MetaFactStatus]; st != "superseded" && st != "retracted" {
			return false, fmt.Sprintf("fact status %q", st)
		}
		age, hot = now.Sub(m.CreatedAt), p.o.RetiredFactHotFor
	case ClassEpisodic:
		if m.Importance >= p.o.PinImportance {
			return false, fmt.Sprintf("importance %.2f ≥ %.2f", m.Importance, p.o.PinImportance)
		}
		if n := a.countSince(now.Add(-p.o.AccessWindow)); p.o.PinAccesses > 0 && n >= p.o.PinAccesses {
			return false, fmt.Sprintf("read %d times in the last %v", n, p.o.AccessWindow)
		}
	}
	if p.o.OlderThan > 0 {
		// The operator's age is the event's: history imported today about a trip 400 days ago is 400 days old.
		hot = p.o.OlderThan
		if c != ClassSemantic {
			age = now.Sub(m.OccurredAt)
		}
	}
	if age <= hot {
		return false, fmt.Sprintf("%s, %v old, hot for %v", c, age.Truncate(time.Hour), hot)
	}
	return true, fmt.Sprintf("%s, %v old, past %v", c, age.Truncate(time.Hour), hot)
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
