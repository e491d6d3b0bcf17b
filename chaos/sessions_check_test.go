package chaos

import (
	"testing"
	"time"
)

// TestSessionCheckCatchesAnomalies runs without a cluster: the session check must accept answers that hold
// every earlier acknowledged append, and count a lost update, a stale read, a failed append that shows and an
// acknowledged append missing after healing.
func TestSessionCheckCatchesAnomalies(t *testing.T) {
	const final = 9
	appendEv := func(c int, text string, call, ret time.Duration, window ...string) *sessionEvent {
		return &sessionEvent{client: c, user: "u", run: "r", text: text, call: call, ret: ret, acked: true,
			answered: true, window: window}
	}
	read := func(c int, call time.Duration, window ...string) *sessionEvent {
		return &sessionEvent{client: c, user: "u", run: "r", call: call, ret: call + 1, answered: true, window: window}
	}
	failed := &sessionEvent{client: 2, user: "u", run: "r", text: "f", call: 0, ret: 1, failed: true}
	unknown := &sessionEvent{client: 2, user: "u", run: "r", text: "x", call: 0, ret: -1}
	cases := []struct {
		name                string
		events              []*sessionEvent
		violations, lostOps int
	}{
		{"concurrent appends, reads after", []*sessionEvent{appendEv(0, "a", 0, 5, "a"), appendEv(1, "b", 1, 4, "a", "b"),
			read(0, 6, "a", "b"), read(final, 10, "b", "a")}, 0, 0},
		{"an unknown append may show or not", []*sessionEvent{unknown, appendEv(0, "a", 0, 5, "x", "a"),
			read(1, 6, "a")}, 0, 0},
		{"lost update", []*sessionEvent{appendEv(0, "a", 0, 1, "a"), appendEv(1, "b", 2, 3, "b")}, 1, 0},
		{"stale read", []*sessionEvent{appendEv(0, "a", 0, 1, "a"), read(1, 2)}, 1, 0},
		{"a failed append shows", []*sessionEvent{failed, read(1, 2, "f")}, 1, 0},
		{"lost after healing", []*sessionEvent{appendEv(0, "a", 0, 1, "a"), read(final, 5)}, 1, 1},
	}
	for _, c := range cases {
		l := &sessionLog{}
		for _, e := range c.events {
			l.record(e)
		}
		_, violations, lost := checkSessions(t, l, final)
		if violations != c.violations || lost != c.lostOps {
			t.Errorf("%s: %d violations, %d lost; want %d, %d", c.name, violations, lost, c.violations, c.lostOps)
		}
	}
}
