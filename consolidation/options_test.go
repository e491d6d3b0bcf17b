package consolidation

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestOptionsValidate(t *testing.T) {
	if err := (Options{}).Validate(); err != nil {
		t.Fatalf("zero options (all defaults) invalid: %v", err)
	}
	tests := []struct {
		o     Options
		field string
	}{
		{Options{Working: WorkingOptions{MaxMessages: -1}}, "working.max_messages"},
		{Options{Working: WorkingOptions{MaxMessages: 4, Fold: 5}}, "working.fold"},
		{Options{Working: WorkingOptions{IdleTTL: -time.Second}}, "working.idle_ttl"},
		{Options{Segment: SegmentOptions{MaxGap: -time.Minute}}, "segment.max_gap"},
		{Options{Segment: SegmentOptions{TopicThreshold: 1.5}}, "segment.topic_threshold"},
		{Options{Facts: FactOptions{RepeatGain: 2}}, "facts.repeat_gain"},
		{Options{Facts: FactOptions{InitialConfidence: 0.2}}, "min ≤ initial"},
		{Options{Facts: FactOptions{MaxHistory: 1}}, "facts.max_history"},
		{Options{Patterns: PatternOptions{RetractBelow: 0.8}}, "patterns.retract_below"},
		{Options{Patterns: PatternOptions{CoreShare: -0.1}}, "patterns.core_share"},
		{Options{Perceptual: PerceptualOptions{MinHistory: 30}}, "perceptual.min_history"},
		{Options{Perceptual: PerceptualOptions{Stat: "mode"}}, "perceptual.stat"},
	}
	for _, tt := range tests {
		err := tt.o.Validate()
		if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("%+v: err = %v, want ErrInvalidOptions naming %s", tt.o, err, tt.field)
		}
	}
}

func TestDefaultsStated(t *testing.T) {
	w := WorkingOptions{}.withDefaults()
	s := SegmentOptions{}.withDefaults()
	f := FactOptions{}.withDefaults()
	p := PatternOptions{}.withDefaults()
	q := PerceptualOptions{}.withDefaults()
	// These are the defaults the doc comments and DESIGN.md promise.
	if w.MaxMessages != 20 || w.Fold != 10 || w.MaxSummaryChars != 1200 || w.IdleTTL != time.Hour ||
		w.MaxPending != 60 || w.CharsPerToken != 4 {
		t.Errorf("working defaults %+v", w)
	}
	if s.MaxGap != 30*time.Minute || s.TopicWindow != 3 || s.TopicThreshold != 0.1 || s.MinTopicWords != 6 ||
		s.MinEpisodeMessages != 2 || s.MaxSummaryChars != 280 || s.MaxTags != 5 || s.MaxEntities != 10 {
		t.Errorf("segment defaults %+v", s)
	}
	if f.InitialConfidence != 0.6 || f.ExplicitConfidence != 0.9 || f.RepeatGain != 0.2 || f.ConfirmGain != 0.5 ||
		f.ChurnPenalty != 0.1 || f.ChurnWindow != 7*24*time.Hour || f.MinConfidence != 0.3 || f.MaxConfidence != 0.99 ||
		f.MaxProvenance != 16 || f.MaxHistory != 32 || len(f.MultiValued) != 9 {
		t.Errorf("fact defaults %+v", f)
	}
	if p.JoinThreshold != 0.3 || p.MinSupport != 3 || p.CoreShare != 0.6 || p.FrequencyHalf != 2 || p.PromoteAt != 0.55 ||
		p.CorrectionFactor != 0.5 || p.RetractBelow != 0.3 || p.RetractAfter != 2 || p.MaxCoreTerms != 6 {
		t.Errorf("pattern defaults %+v", p)
	}
	if q.Window != 28 || q.MinHistory != 7 || q.Threshold != 3.5 || q.Stat != StatMean || q.MinRelativeSpread != 0.01 {
		t.Errorf("perceptual defaults %+v", q)
	}
}
