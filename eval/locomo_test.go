package eval

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// A hand-made conversation in the LoCoMo shape (invented text, not from the dataset).
const tinyLoCoMo = `[
 {"sample_id": "conv-x",
  "conversation": {
    "speaker_a": "Ann", "speaker_b": "Bo",
    "session_2_date_time": "12:06 am on 11 November, 2022",
    "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "Back from the lake."},
                  {"speaker": "Ann", "dia_id": "D2:02", "text": "Look!", "blip_caption": "a photo of a red kayak", "img_url": ["x"]}],
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat."}],
    "session_3_date_time": "9:27 am on 7 February, 2022",
    "session_3": []
  },
  "qa": [
    {"question": "What did Ann adopt?", "answer": "a cat", "evidence": ["D1:1"], "category": 4},
    {"question": "Q2", "answer": 2022, "evidence": ["D1:1; D2:2", "D:2:1", "D9:9", "D"], "category": 2},
    {"question": "Q3", "adversarial_answer": "none", "evidence": ["D7:7"], "category": 5},
    {"question": "Q4", "answer": null, "evidence": [], "category": 1}
  ],
  "event_summary": {"ignored": true}
 }
]`

func TestReadLoCoMoTiny(t *testing.T) {
	ss, err := ReadLoCoMo(strings.NewReader(tinyLoCoMo))
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 1 {
		t.Fatalf("%d samples", len(ss))
	}
	s := ss[0]
	if s.ID != "conv-x" || s.SpeakerA != "Ann" || s.SpeakerB != "Bo" || s.Dates != 3 || s.TurnCount() != 3 {
		t.Fatalf("sample %+v", s)
	}
	if len(s.Sessions) != 2 || s.Sessions[0].Num != 1 || s.Sessions[1].Num != 2 {
		t.Fatalf("sessions not in number order or empty one kept: %+v", s.Sessions)
	}
	if got := s.Sessions[1].Time.Format("2006-01-02 15:04"); got != "2022-11-11 00:06" {
		t.Fatalf("session 2 time %s", got)
	}
	turn := s.Sessions[1].Turns[1]
	if turn.DiaID != "D2:2" || turn.BlipCaption != "a photo of a red kayak" {
		t.Fatalf("turn %+v", turn)
	}
	for f, want := range map[TurnFormat]string{
		{Speaker: true, Captions: true}: "Ann: Look! [image: a photo of a red kayak]",
		{Speaker: true}:                 "Ann: Look!",
		{Captions: true}:                "Look! [image: a photo of a red kayak]",
		{}:                              "Look!",
	} {
		if got := FormatLoCoMoTurn(turn, f); got != want {
			t.Errorf("format %+v: %q, want %q", f, got, want)
		}
	}
	q := s.Questions
	if len(q) != 4 {
		t.Fatalf("%d questions", len(q))
	}
	if !slices.Equal(q[0].Evidence, []string{"D1:1"}) || !q[0].Usable() || string(q[0].Answer) != `"a cat"` {
		t.Fatalf("q0 %+v", q[0])
	}
	if !slices.Equal(q[1].Evidence, []string{"D1:1", "D2:2", "D2:1"}) || !slices.Equal(q[1].Dropped, []string{"D9:9", "D"}) ||
		string(q[1].Answer) != "2022" {
		t.Fatalf("q1 evidence %q dropped %q answer %s", q[1].Evidence, q[1].Dropped, q[1].Answer)
	}
	if q[2].Usable() || q[2].Category != CategoryAdversarial || string(q[2].Answer) != `"none"` {
		t.Fatalf("q2 %+v", q[2])
	}
	if q[3].Usable() || q[3].Index != 3 {
		t.Fatalf("q3 %+v", q[3])
	}
}

func TestReadLoCoMoErrors(t *testing.T) {
	for name, c := range map[string]struct{ in, want string }{
		"not an array": {`{"sample_id":"a"}`, "want a JSON array"},
		"bad date": {`[{"sample_id":"a","conversation":{"session_1_date_time":"May 8, 2023","session_1":[]},"qa":[]}]`,
			"sample a: session_1_date_time"},
		"turns without date": {`[{"sample_id":"a","conversation":{"session_1":[{"speaker":"x","dia_id":"D1:1","text":"t"}]},"qa":[]}]`,
			"no session_1_date_time"},
		"no id":     {`[{"conversation":{},"qa":[]}]`, "sample #0: no sample_id"},
		"truncated": {`[{"sample_id":"a","conversation":{}`, "element 0"},
		"trailing":  {`[] []`, "after the array"},
	} {
		_, err := ReadLoCoMo(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", name, err, c.want)
		}
	}
}

// TestLoCoMoDevFile parses the whole dev file end to end: every date, every turn, every question.
func TestLoCoMoDevFile(t *testing.T) {
	path := dataFile(t, "locomo/locomo-dev.json")
	ss, err := LoadLoCoMoFile(path)
	if err != nil {
		t.Fatal(err) // an unparseable date fails here, naming the sample and key
	}
	if len(ss) != 5 {
		t.Fatalf("%d conversations, want 5", len(ss))
	}
	// Every date_time value of the raw file was parsed: count them independently of the loader.
	var raw []struct {
		Conversation map[string]json.RawMessage `json:"conversation"`
	}
	mustUnmarshalFile(t, path, &raw)
	var rawDates, dates, turns, questions int
	for _, r := range raw {
		for k := range r.Conversation {
			if strings.HasSuffix(k, "_date_time") {
				rawDates++
			}
		}
	}
	perCat := map[int]int{}
	usable := map[int]int{}
	var dropped []string
	for _, s := range ss {
		dates += s.Dates
		turns += s.TurnCount()
		for _, sess := range s.Sessions {
			if sess.Time.IsZero() || sess.Time.Year() < 2020 || sess.Time.Year() > 2025 {
				t.Errorf("%s session %d: time %v from %q", s.ID, sess.Num, sess.Time, sess.DateTime)
			}
			for _, tn := range sess.Turns {
				if _, ok := NormalizeDiaID(tn.DiaID); !ok || tn.Speaker == "" {
					t.Errorf("%s: turn %+v", s.ID, tn)
				}
			}
		}
		for _, q := range s.Questions {
			questions++
			perCat[q.Category]++
			if q.Usable() {
				usable[q.Category]++
			}
			dropped = append(dropped, q.Dropped...)
		}
	}
	if dates != rawDates || dates == 0 {
		t.Fatalf("parsed %d dates of %d", dates, rawDates)
	}
	t.Logf("conversations %d, dates %d, turns %d, questions %d, per category %v, usable %v, dropped ids %q",
		len(ss), dates, turns, questions, perCat, usable, dropped)
	if turns != 2760 || questions != 999 {
		t.Errorf("turns %d questions %d, want 2760 and 999", turns, questions)
	}
	wantCat := map[int]int{1: 142, 2: 156, 3: 46, 4: 418, 5: 237}
	if !mapsEqual(perCat, wantCat) {
		t.Errorf("questions per category %v, want %v", perCat, wantCat)
	}
	// The malformed ids are repaired ("D8:6; D9:17" splits, "D:11:26" loses its colon); what remains dropped
	// is a bare "D" and one id no turn carries.
	slices.Sort(dropped)
	if !slices.Equal(dropped, []string{"D", "D10:19"}) {
		t.Errorf("dropped evidence %q", dropped)
	}
	if n := questions - sum(usable); n != 2 {
		t.Errorf("%d questions without usable evidence, want 2", n)
	}
}

func sum(m map[int]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func mapsEqual(a, b map[int]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
