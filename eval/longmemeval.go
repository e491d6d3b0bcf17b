package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// LongMemEvalQuestion is one LongMemEval question with its own haystack.
type LongMemEvalQuestion struct {
	QuestionID         string              `json:"question_id"`
	QuestionType       string              `json:"question_type"`
	Question           string              `json:"question"`
	Answer             json.RawMessage     `json:"answer"` // a string or a number
	QuestionDate       string              `json:"question_date"`
	HaystackDates      []string            `json:"haystack_dates"`
	HaystackSessionIDs []string            `json:"haystack_session_ids"`
	HaystackSessions   [][]LongMemEvalTurn `json:"haystack_sessions"`
	AnswerSessionIDs   []string            `json:"answer_session_ids"`
}

// LongMemEvalTurn is one turn of a haystack session.
type LongMemEvalTurn struct {
	Role      string `json:"role"`
	Content   string `json:"content"`
	HasAnswer bool   `json:"has_answer,omitempty"`
}

// LongMemEvalSession is a haystack session with its parsed date.
type LongMemEvalSession struct {
	ID    string
	Date  string    // as in the file
	Time  time.Time // UTC
	Turns []LongMemEvalTurn
}

// Abstention reports an _abs question: its answer is not in the haystack, so it has no retrieval target.
func (q *LongMemEvalQuestion) Abstention() bool { return strings.HasSuffix(q.QuestionID, "_abs") }

// AskedAt is the question's question_date, UTC like the sessions' dates.
func (q *LongMemEvalQuestion) AskedAt() (time.Time, error) {
	t, err := ParseLongMemEvalTime(q.QuestionDate)
	if err != nil {
		return t, fmt.Errorf("question %s: question_date: %w", q.QuestionID, err)
	}
	return t, nil
}

// Sessions checks that ids, dates and sessions line up and returns the sessions in time order (stable, so
// sessions of the same minute keep their file order).
func (q *LongMemEvalQuestion) Sessions() ([]LongMemEvalSession, error) {
	n := len(q.HaystackSessions)
	if len(q.HaystackSessionIDs) != n || len(q.HaystackDates) != n {
		return nil, fmt.Errorf("question %s: %d sessions, %d session ids, %d dates", q.QuestionID, n,
			len(q.HaystackSessionIDs), len(q.HaystackDates))
	}
	out := make([]LongMemEvalSession, n)
	for i := range n {
		t, err := ParseLongMemEvalTime(q.HaystackDates[i])
		if err != nil {
			return nil, fmt.Errorf("question %s: session %s: %w", q.QuestionID, q.HaystackSessionIDs[i], err)
		}
		out[i] = LongMemEvalSession{ID: q.HaystackSessionIDs[i], Date: q.HaystackDates[i], Time: t, Turns: q.HaystackSessions[i]}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, nil
}

// StreamLongMemEval decodes a LongMemEval file (a JSON array of questions) one question at a time and calls
// fn for each; memory use is one question, whatever the file size. An error from fn ends the stream.
func StreamLongMemEval(r io.Reader, fn func(q *LongMemEvalQuestion) error) error {
	err := streamArray(r, func(i int, q *LongMemEvalQuestion) error {
		if q.QuestionID == "" {
			return fmt.Errorf("element %d: no question_id", i)
		}
		return fn(q)
	})
	if err != nil {
		return fmt.Errorf("longmemeval: %w", err)
	}
	return nil
}

// StopStream, returned by a StreamLongMemEval callback, ends the stream early without an error.
var StopStream = errStop
