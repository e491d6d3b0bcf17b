package consolidation

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func conv(start time.Time, lines ...string) []Message {
	var out []Message
	at := start
	for _, l := range lines {
		role, text, _ := strings.Cut(l, ": ")
		if strings.HasPrefix(role, "+") { // "+45m user: …" advances the clock first
			d, rest, _ := strings.Cut(role[1:], " ")
			dur, _ := time.ParseDuration(d)
			at = at.Add(dur)
			role = rest
		}
		m := Message{Role: Role(strings.TrimSuffix(role, "!")), Content: text, Time: at, TaskEnd: strings.HasSuffix(role, "!")}
		out = append(out, m)
		at = at.Add(time.Minute)
	}
	return out
}

func boundaries(eps []Episode) string {
	var parts []string
	for _, e := range eps {
		parts = append(parts, e.Boundary+"/"+string(rune('0'+len(e.Messages))))
	}
	return strings.Join(parts, " ")
}

func TestSegmentBoundaries(t *testing.T) {
	tests := []struct {
		name  string
		msgs  []Message
		want  string
		extra SegmentOptions
	}{
		{"one topic", conv(t0,
			"user: Can you book a flight to Paris for Friday?",
			"assistant: Sure, a morning flight to Paris on Friday?",
			"user: Yes, a morning flight please, window seat.",
			"assistant: Booked the Friday morning flight to Paris."), "start/4", SegmentOptions{}},
		{"time gap", conv(t0,
			"user: Book a flight to Paris.", "assistant: Booked the flight to Paris.",
			"+45m user: Book a flight to Paris again.", "assistant: Booked."), "start/2 time_gap/2", SegmentOptions{}},
		{"marker", conv(t0,
			"user: Book a flight to Paris.", "assistant: Booked the flight to Paris.",
			"user: Okay, next: book a flight to Paris for my boss.", "assistant: Done."), "start/2 task_marker/2", SegmentOptions{}},
		{"task end", conv(t0,
			"user: Book a flight to Paris.", "tool!: booking confirmed PNR X1", "assistant: Booked the flight to Paris.",
			"user: And the flight to Paris for my boss?", "assistant: Sure."), "start/3 task_end/2", SegmentOptions{}},
		{"tool ends tasks when asked", conv(t0,
			"user: Book a flight to Paris.", "tool: booking confirmed", "assistant: Booked.",
			"user: Thanks, the flight to Paris for my boss too.", "assistant: Sure."), "start/3 task_end/2",
			SegmentOptions{ToolCallsEndTasks: true}},
		{"topic shift", conv(t0,
			"user: My sourdough bread recipe needs more hydration and a longer proof.",
			"assistant: Try seventy five percent hydration and an overnight cold proof for the sourdough.",
			"user: The sourdough crust was great, the crumb was dense though.",
			"user: Separately, my kubernetes cluster keeps evicting pods under memory pressure.",
			"assistant: Set memory requests and limits on the pods, and check the kubelet eviction thresholds.",
			"user: The cluster nodes have sixteen gigabytes each."), "start/3 topic_shift/3", SegmentOptions{}},
		{"short chat is not a topic", conv(t0, "user: hi", "assistant: hello", "user: ok thanks"), "start/3", SegmentOptions{}},
	}
	for _, tt := range tests {
		eps, err := Segment(tt.msgs, tt.extra)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := boundaries(eps); got != tt.want {
			t.Errorf("%s: boundaries %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestEpisodeFields(t *testing.T) {
	eps, err := Segment(conv(t0,
		"user: Please remember I'm allergic to peanuts. Book a table at Luigi's in New York for Friday.",
		"tool: reservation confirmed at Luigi's, table for two",
		"assistant: Booked a table for two at Luigi's in New York on Friday, and noted the peanut allergy."), SegmentOptions{})
	if err != nil || len(eps) != 1 {
		t.Fatalf("eps %v err %v", len(eps), err)
	}
	e := eps[0]
	if !e.Start.Equal(t0) || !e.End.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("times %v–%v", e.Start, e.End)
	}
	if len([]rune(e.Summary)) > 280 || !strings.Contains(e.Summary, "Luigi") {
		t.Errorf("summary %q", e.Summary)
	}
	if strings.Join(e.Entities, ",") != "Luigi,New York" {
		t.Errorf("entities %q", e.Entities)
	}
	if len(e.Tags) != 5 || e.Tags[0] != "luigi" {
		t.Errorf("tags %q", e.Tags)
	}
	// 0.2 base + 0.2 fact + 0.2 salient + 0.1 tool + 0.1·(2/3) entities + 0.1·0.3 messages.
	if e.Importance != 0.8 {
		t.Errorf("importance %v, want 0.8", e.Importance)
	}
}

func TestSegmentRejectsBadInput(t *testing.T) {
	back := conv(t0, "user: a", "user: b")
	back[1].Time = t0.Add(-time.Minute)
	for name, msgs := range map[string][]Message{
		"backwards": back,
		"no role":   {{Content: "x", Time: t0}},
	} {
		if _, err := Segment(msgs, SegmentOptions{}); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if _, err := Segment(nil, SegmentOptions{TopicThreshold: 2}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("threshold 2: err = %v", err)
	}
	if eps, err := Segment(nil, SegmentOptions{}); err != nil || len(eps) != 0 {
		t.Errorf("empty: %v %v", eps, err)
	}
}
