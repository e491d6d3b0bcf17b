package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A hand-made conversation in the LoCoMo shape (invented text, not from the dataset). With the fake's word
// matching: q0 "kayak" finds D1:2 only (recall 1 at every k); q1's evidence D1:1 and D2:1 share "garden" with
// D2:2, which ranks first (more words) so recall@1 is 0 and recall@3 is 1; q2 (category 5) finds nothing.
const evalTinyLoCoMo = `[
 {"sample_id": "conv-t",
  "conversation": {
    "speaker_a": "Ann", "speaker_b": "Bo",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "My garden is full of tomatoes."},
                  {"speaker": "Bo", "dia_id": "D1:2", "text": "Look at this!", "blip_caption": "a red kayak"}],
    "session_2_date_time": "12:06 am on 11 November, 2022",
    "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "The garden survived the frost."},
                  {"speaker": "Ann", "dia_id": "D2:2", "text": "Garden tomatoes frost planting tips."}]
  },
  "qa": [
    {"question": "What colour is the kayak?", "answer": "red", "evidence": ["D1:02"], "category": 4},
    {"question": "Which garden tomatoes survived the frost planting?", "answer": "x", "evidence": ["D1:1; D2:1"], "category": 1},
    {"question": "What is Bo's favourite opera?", "adversarial_answer": "none", "evidence": ["D:2:1"], "category": 5},
    {"question": "No evidence here", "answer": "x", "evidence": ["D9:9", "D"], "category": 2}
  ]
 },
 {"sample_id": "conv-u", "conversation": {"speaker_a": "A", "speaker_b": "B",
   "session_1_date_time": "9:27 am on 7 February, 2022", "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hello"}]},
  "qa": []}
]`

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEvalFlags(t *testing.T) {
	file := writeTemp(t, "l.json", evalTinyLoCoMo)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"eval"}, "missing subcommand"},
		{[]string{"eval", "nope"}, `unknown command "nope"`},
		{[]string{"eval", "locomo"}, "--file is required"},
		{[]string{"eval", "locomo", "--file", file, "--mode", "dense"}, `--mode: unknown mode "dense"`},
		{[]string{"eval", "locomo", "--file", file, "--k", "0,5"}, "--k: k 0: must be between 1 and 1000"},
		{[]string{"eval", "locomo", "--file", file, "--k", "x"}, "invalid argument"},
		{[]string{"eval", "locomo", "--file", file, "--questions", "-1"}, "--questions -1 is negative"},
		{[]string{"eval", "locomo", "--file", file, "--speaker", "meta"}, `--speaker "meta": want text or entity`},
		{[]string{"eval", "locomo", "--file", file, "--conversations", "conv-t,conv-zz"}, `no conversation "conv-zz"`},
		{[]string{"eval", "locomo", "--file", filepath.Join(t.TempDir(), "missing.json")}, "no such file"},
		{[]string{"eval", "longmemeval", "--file", file}, "no question_id"},
		{[]string{"eval", "longmemeval", "--file", file, "--mode", "x"}, "--mode"},
	} {
		_, _, err := run(t, nil, "", append([]string{"--addr", unreachable}, c.args...)...)
		wantErr(t, err, c.want)
	}
}

func TestCutText(t *testing.T) {
	if s, cut := cutText("abc", 3); s != "abc" || cut {
		t.Error("short text cut")
	}
	if s, cut := cutText("aé", 2); s != "a" || !cut {
		t.Errorf("cut inside a rune: %q", s)
	}
}
