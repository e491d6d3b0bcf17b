package consolidation

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func msg(id string, role Role, at time.Time, text string) Message {
	return Message{ID: id, Role: role, Content: text, Time: at}
}

func TestAppendFoldsOldestHalf(t *testing.T) {
	var s Session
	var folded []Message
	for i := 0; i < 21; i++ {
		res, err := s.Append(msg(fmt.Sprint("m", i), RoleUser, t0.Add(time.Duration(i)*time.Minute),
			fmt.Sprintf("Message number %d is about topic%d.", i, i)), WorkingOptions{})
		if err != nil {
			t.Fatal(err)
		}
		folded = append(folded, res.Folded...)
	}
	// 21 > 20: the oldest 10 fold into the summary and wait in Pending.
	if len(s.Messages) != 11 || len(folded) != 10 || s.Folded != 10 || len(s.Pending) != 10 {
		t.Fatalf("window %d, folded %d/%d, pending %d; want 11, 10/10, 10", len(s.Messages), len(folded), s.Folded, len(s.Pending))
	}
	if s.Messages[0].ID != "m10" || folded[0].ID != "m0" {
		t.Errorf("window starts at %s, folded starts at %s", s.Messages[0].ID, folded[0].ID)
	}
	if !strings.Contains(s.Summary, "Message number") || len([]rune(s.Summary)) > 1200 {
		t.Errorf("summary %q", s.Summary)
	}
	if !s.LastActive.Equal(t0.Add(20 * time.Minute)) {
		t.Errorf("last active %v", s.LastActive)
	}
}

func TestRollingSummaryBounded(t *testing.T) {
	var s Session
	o := WorkingOptions{MaxMessages: 4, MaxSummaryChars: 120}
	for i := 0; i < 40; i++ {
		if _, err := s.Append(msg("", RoleUser, t0, fmt.Sprintf("We discussed the flight booking option %d in detail.", i)), o); err != nil {
			t.Fatal(err)
		}
		if n := len([]rune(s.Summary)); n > 120 {
			t.Fatalf("after %d messages the summary has %d runes: %q", i+1, n, s.Summary)
		}
	}
	if s.Summary == "" || s.Folded != 36 {
		t.Errorf("summary %q, folded %d", s.Summary, s.Folded)
	}
}

func TestAppendClampsTimeAndReportsFlushDue(t *testing.T) {
	var s Session
	o := WorkingOptions{MaxMessages: 2, Fold: 1, MaxPending: 2}
	due := false
	for i, at := range []time.Time{t0, t0.Add(time.Minute), t0, t0.Add(2 * time.Minute)} {
		res, err := s.Append(msg(fmt.Sprint(i), RoleUser, at, "hello there friend"), o)
		if err != nil {
			t.Fatal(err)
		}
		due = res.FlushDue
	}
	for i := 1; i < len(s.Messages); i++ {
		if s.Messages[i].Time.Before(s.Messages[i-1].Time) {
			t.Errorf("time went backwards at %d", i)
		}
	}
	if !due || len(s.Pending) != 2 {
		t.Errorf("flush due %v, pending %d; want true, 2", due, len(s.Pending))
	}
}

func TestAppendRejectsBadInput(t *testing.T) {
	var s Session
	for _, m := range []Message{
		{Role: "system", Content: "x", Time: t0},
		{Role: RoleUser, Content: "  ", Time: t0},
		{Role: RoleUser, Content: "x"},
		{Role: RoleUser, Content: "\xff", Time: t0},
	} {
		if _, err := s.Append(m, WorkingOptions{}); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("Append(%+v) err = %v, want ErrInvalidInput", m, err)
		}
	}
	if _, err := s.Append(msg("", RoleUser, t0, "x"), WorkingOptions{Fold: 30}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("fold > window: err = %v", err)
	}
	if len(s.Messages) != 0 {
		t.Errorf("a rejected append changed the session: %d messages", len(s.Messages))
	}
}

func TestTokensAndExpiry(t *testing.T) {
	s := Session{Summary: strings.Repeat("a", 40)}
	s.Append(msg("", RoleUser, t0, strings.Repeat("b", 9)), WorkingOptions{})
	// summary 40/4 = 10, message ceil(9/4) = 3 + 4 framing.
	if got := s.Tokens(WorkingOptions{}); got != 17 {
		t.Errorf("tokens = %d, want 17", got)
	}
	if EstimateTokens("héllo", 4) != 2 {
		t.Errorf("EstimateTokens counts runes, not bytes")
	}
	if s.Expired(t0.Add(59*time.Minute), WorkingOptions{}) || !s.Expired(t0.Add(time.Hour), WorkingOptions{}) {
		t.Errorf("idle TTL of 1h not honoured")
	}
	if (&Session{}).Expired(t0, WorkingOptions{}) {
		t.Errorf("a session never active cannot expire")
	}
}

func seqIDs() IDFunc {
	n := 0
	return func(time.Time) string { n++; return fmt.Sprintf("id%03d", n) }
}

func TestFlushAndEnd(t *testing.T) {
	var s Session
	o := Options{Working: WorkingOptions{MaxMessages: 4}}
	texts := []string{"Hi!", "Hello, how can I help?", "I live in Berlin.", "Noted.", "I like jazz.", "Great choice."}
	for i, tx := range texts {
		role := RoleUser
		if i%2 == 1 {
			role = RoleAssistant
		}
		if _, err := s.Append(msg(fmt.Sprint("m", i), role, t0.Add(time.Duration(i)*time.Minute), tx), o.Working); err != nil {
			t.Fatal(err)
		}
	}
	c := Consolidator{Options: o, NewID: seqIDs()}
	rep, err := s.Flush(c, nil, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	// The two folded messages and the four in the window: nothing lost to compaction.
	if rep.Messages != 6 || len(rep.Decisions) != 2 || len(rep.Rejections) != 1 || len(rep.Episodes) != 1 {
		t.Fatalf("report: %s", rep)
	}
	if got := rep.String(); got != "consolidated 6 messages: 1 episodes; facts: 2 ADD; 1 sentences rejected" {
		t.Errorf("String() = %q", got)
	}
	// A second flush has nothing new; after another message, only that one.
	if rep2, _ := s.Flush(c, rep.Facts, t0.Add(time.Hour)); rep2.Messages != 0 {
		t.Errorf("second flush consolidated %d messages", rep2.Messages)
	}
	s.Append(msg("m6", RoleUser, t0.Add(2*time.Hour), "I live in Berlin."), o.Working)
	rep3, err := s.End(c, rep.Facts, t0.Add(3*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if rep3.Messages != 1 || !rep3.Ended || rep3.Decisions[0].Op != OpNone {
		t.Errorf("end report: %s %+v", rep3, rep3.Decisions)
	}
	if len(s.Messages) != 0 || s.Summary != "" || s.Consolidated != 0 {
		t.Errorf("End left state: %+v", s)
	}
}

func TestFlushErrorLeavesSessionUnchanged(t *testing.T) {
	var s Session
	s.Append(msg("m0", RoleUser, t0, "I live in Berlin."), WorkingOptions{})
	if _, err := s.Flush(Consolidator{}, nil, t0); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("flush without id func: err = %v", err)
	}
	if s.Consolidated != 0 || !s.LastFlush.IsZero() {
		t.Errorf("failed flush changed the session: %+v", s)
	}
}
