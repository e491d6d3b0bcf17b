package consolidation

import (
	"fmt"
	"time"
)

// Options gathers the options of every stage. The zero value means "all defaults": a zero
// field takes the default stated next to it, so 0 cannot be used to disable a gain or a
// penalty (use a tiny positive value). Negative or out-of-range values are errors.
type Options struct {
	Working    WorkingOptions
	Segment    SegmentOptions
	Facts      FactOptions
	Patterns   PatternOptions
	Perceptual PerceptualOptions
}

// Validate checks every stage's options.
func (o Options) Validate() error {
	for _, err := range []error{o.Working.Validate(), o.Segment.Validate(), o.Facts.Validate(),
		o.Patterns.Validate(), o.Perceptual.Validate()} {
		if err != nil {
			return err
		}
	}
	return nil
}

// check collects option errors: each failing condition names its field.
type check struct{ err error }

func (c *check) nonNeg(field string, v float64) {
	if c.err == nil && v < 0 {
		c.err = fmt.Errorf("%w: %s is negative (%v)", ErrInvalidOptions, field, v)
	}
}

func (c *check) nonNegDur(field string, d time.Duration) {
	if c.err == nil && d < 0 {
		c.err = fmt.Errorf("%w: %s is negative (%v)", ErrInvalidOptions, field, d)
	}
}

// unit checks a value that must lie in [0, 1].
func (c *check) unit(field string, v float64) {
	if c.err == nil && (v < 0 || v > 1) {
		c.err = fmt.Errorf("%w: %s must be between 0 and 1 (got %v)", ErrInvalidOptions, field, v)
	}
}

func (c *check) cond(ok bool, format string, args ...any) {
	if c.err == nil && !ok {
		c.err = fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, args...)...)
	}
}

func defInt(v *int, d int) {
	if *v == 0 {
		*v = d
	}
}

func defFloat(v *float64, d float64) {
	if *v == 0 {
		*v = d
	}
}

func defDur(v *time.Duration, d time.Duration) {
	if *v == 0 {
		*v = d
	}
}
