package eval

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestStreamLongMemEvalSample(t *testing.T) {
	f, err := os.Open(dataFile(t, "longmemeval/longmemeval-format-sample.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	types := map[string]int{}
	var n, sessions, turns int
	err = StreamLongMemEval(f, func(q *LongMemEvalQuestion) error {
		n++
		types[q.QuestionType]++
		ss, err := q.Sessions()
		if err != nil {
			return err
		}
		for i, s := range ss {
			if i > 0 && s.Time.Before(ss[i-1].Time) {
				return fmt.Errorf("%s: sessions out of time order", q.QuestionID)
			}
			turns += len(s.Turns)
		}
		sessions += len(ss)
		if _, err := ParseLongMemEvalTime(q.QuestionDate); err != nil {
			return err
		}
		if len(q.AnswerSessionIDs) == 0 || q.Question == "" || len(q.Answer) == 0 {
			return fmt.Errorf("%s: incomplete", q.QuestionID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("questions %d, types %v, sessions %d, turns %d", n, types, sessions, turns)
	if n != 6 || len(types) != 6 {
		t.Fatalf("%d questions of %d types, want 6 of 6", n, len(types))
	}
}

func TestLongMemEvalSessionsOrderAndChecks(t *testing.T) {
	q := LongMemEvalQuestion{
		QuestionID:         "q1",
		HaystackSessionIDs: []string{"late", "early", "early2"},
		HaystackDates:      []string{"2023/05/21 (Sun) 10:00", "2023/05/20 (Sat) 00:31", "2023/05/20 (Sat) 00:31"},
		HaystackSessions:   [][]LongMemEvalTurn{{{Role: "user", Content: "c"}}, {{Role: "user", Content: "a"}}, {{Role: "assistant", Content: "b"}}},
	}
	ss, err := q.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	if ss[0].ID != "early" || ss[1].ID != "early2" || ss[2].ID != "late" || ss[2].Turns[0].Content != "c" {
		t.Fatalf("order %v %v %v", ss[0].ID, ss[1].ID, ss[2].ID)
	}
	q.HaystackDates = q.HaystackDates[:2]
	if _, err := q.Sessions(); err == nil {
		t.Fatal("mismatched lengths accepted")
	}
	q.HaystackDates = []string{"2023/05/21 (Mon) 10:00", "2023/05/20 (Sat) 00:31", "2023/05/20 (Sat) 00:31"}
	if _, err := q.Sessions(); err == nil || !strings.Contains(err.Error(), "session late") {
		t.Fatalf("wrong weekday: %v", err)
	}
	if !(&LongMemEvalQuestion{QuestionID: "x_abs"}).Abstention() || (&LongMemEvalQuestion{QuestionID: "abs_x"}).Abstention() {
		t.Fatal("Abstention")
	}
}

func TestStreamLongMemEvalErrorsAndStop(t *testing.T) {
	for name, c := range map[string]struct{ in, want string }{
		"object":     {`{"question_id":"a"}`, "want a JSON array"},
		"empty":      {``, "want a JSON array"},
		"no id":      {`[{"question":"x"}]`, "element 0: no question_id"},
		"bad elem":   {`[{"question_id":"a"}, 3]`, "element 1"},
		"truncated":  {`[{"question_id":"a"}`, "end of array"},
		"trailing":   {`[{"question_id":"a"}] {}`, "after the array"},
		"wrong type": {`[{"question_id":"a","haystack_sessions":"x"}]`, "element 0"},
	} {
		err := StreamLongMemEval(strings.NewReader(c.in), func(*LongMemEvalQuestion) error { return nil })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", name, err, c.want)
		}
	}
	if err := StreamLongMemEval(strings.NewReader(`[]`), func(*LongMemEvalQuestion) error { return nil }); err != nil {
		t.Errorf("empty array: %v", err)
	}
	var seen int
	err := StreamLongMemEval(strings.NewReader(`[{"question_id":"a"},{"question_id":"b"},{"question_id":"c"}`),
		func(*LongMemEvalQuestion) error {
			seen++
			if seen == 2 {
				return StopStream
			}
			return nil
		})
	if err != nil || seen != 2 {
		t.Fatalf("stop: %v after %d", err, seen)
	}
	boom := errors.New("boom")
	err = StreamLongMemEval(strings.NewReader(`[{"question_id":"a"}]`), func(*LongMemEvalQuestion) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("callback error lost: %v", err)
	}
}

// TestStreamLongMemEvalLargeFile streams a generated file far larger than the heap it may use, which only a
// one-question-at-a-time decoder manages.
func TestStreamLongMemEvalLargeFile(t *testing.T) {
	questions, turnBytes := 1500, 2000 // ~60 MB
	if testing.Short() {
		questions = 150
	}
	path := filepath.Join(t.TempDir(), "large.json")
	size := writeLargeLongMemEval(t, path, questions, turnBytes)

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var n int
	var peak uint64
	var ms runtime.MemStats
	err = StreamLongMemEval(f, func(q *LongMemEvalQuestion) error {
		if want := fmt.Sprintf("gen-%d", n); q.QuestionID != want {
			return fmt.Errorf("question %q, want %q", q.QuestionID, want)
		}
		ss, err := q.Sessions()
		if err != nil {
			return err
		}
		if len(ss) != 10 || len(ss[0].Turns) != 2 || len(ss[9].Turns[1].Content) != turnBytes {
			return fmt.Errorf("%s: shape", q.QuestionID)
		}
		if n%100 == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != questions {
		t.Fatalf("streamed %d questions of %d", n, questions)
	}
	t.Logf("file %.1f MB, %d questions, peak live heap %.1f MB", float64(size)/1e6, n, float64(peak)/1e6)
	if !testing.Short() && peak > uint64(size)/4 {
		t.Fatalf("live heap reached %d bytes for a %d-byte file: the loader does not stream", peak, size)
	}
}

func writeLargeLongMemEval(t *testing.T, path string, questions, turnBytes int) int64 {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	content := strings.Repeat("lorem ipsum ", turnBytes/12+1)[:turnBytes]
	w.WriteString("[\n")
	for i := range questions {
		q := LongMemEvalQuestion{
			QuestionID: fmt.Sprintf("gen-%d", i), QuestionType: "multi-session", Question: "what?",
			Answer: json.RawMessage(`"x"`), QuestionDate: "2023/06/01 (Thu) 12:00",
		}
		for s := range 10 {
			id := fmt.Sprintf("sess-%d-%d", i, s)
			q.HaystackSessionIDs = append(q.HaystackSessionIDs, id)
			q.HaystackDates = append(q.HaystackDates, fmt.Sprintf("2023/05/%02d (%s) 10:00", 20+s, weekdayMay2023(20+s)))
			q.HaystackSessions = append(q.HaystackSessions, []LongMemEvalTurn{
				{Role: "user", Content: "question " + id}, {Role: "assistant", Content: content, HasAnswer: s == 3}})
		}
		q.AnswerSessionIDs = []string{q.HaystackSessionIDs[3]}
		if i > 0 {
			w.WriteString(",")
		}
		if err := enc.Encode(&q); err != nil {
			t.Fatal(err)
		}
	}
	w.WriteString("]\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	return st.Size()
}

// weekdayMay2023 names the weekday of a day of May 2023 (1 May 2023 was a Monday).
func weekdayMay2023(day int) string {
	return []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}[(day-1)%7]
}
