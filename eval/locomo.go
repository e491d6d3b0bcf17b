package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// LoCoMo question categories.
const (
	CategoryMultiHop    = 1
	CategoryTemporal    = 2
	CategoryOpenDomain  = 3
	CategorySingleHop   = 4
	CategoryAdversarial = 5 // no answer in the conversation; reported apart
)

// CategoryName names a LoCoMo category ("multi-hop"), or "category N" for an unknown one.
func CategoryName(c int) string {
	switch c {
	case CategoryMultiHop:
		return "multi-hop"
	case CategoryTemporal:
		return "temporal"
	case CategoryOpenDomain:
		return "open-domain"
	case CategorySingleHop:
		return "single-hop"
	case CategoryAdversarial:
		return "adversarial"
	}
	return "category " + strconv.Itoa(c)
}

// LoCoMoSample is one conversation with its questions.
type LoCoMoSample struct {
	ID        string
	SpeakerA  string
	SpeakerB  string
	Sessions  []LoCoMoSession // by session number; only sessions with turns
	Questions []LoCoMoQuestion
	// Dates counts the session_<n>_date_time values parsed, including those of sessions without turns.
	Dates int
}

// AskedAt is when the questions are taken to be asked: LoCoMo gives them no date, so the start of the latest
// session (zero without sessions).
func (s LoCoMoSample) AskedAt() time.Time {
	var t time.Time
	for _, ss := range s.Sessions {
		if ss.Time.After(t) {
			t = ss.Time
		}
	}
	return t
}

// LoCoMoSession is one session of a conversation.
type LoCoMoSession struct {
	Num      int
	DateTime string    // as in the file
	Time     time.Time // DateTime parsed, UTC
	Turns    []LoCoMoTurn
}

// LoCoMoTurn is one turn of a session.
type LoCoMoTurn struct {
	Speaker     string
	DiaID       string // canonical (NormalizeDiaID), or as in the file when it is no dialogue id
	Text        string
	BlipCaption string // caption of a shared image, when there is one
}

// LoCoMoQuestion is one annotated question.
type LoCoMoQuestion struct {
	Index       int // position in the sample's qa list
	Question    string
	Answer      json.RawMessage // answer, or adversarial_answer for category 5; a string, number or null
	Category    int
	RawEvidence []string
	// Evidence is RawEvidence normalised (NormalizeEvidence) and kept only where a turn has the id.
	Evidence []string
	// Dropped lists normalised ids that match no turn and pieces that are no dialogue id.
	Dropped []string
}

// Usable reports whether the question has evidence to measure recall against.
func (q *LoCoMoQuestion) Usable() bool { return len(q.Evidence) > 0 }

// TurnCount is the number of turns over all sessions.
func (s *LoCoMoSample) TurnCount() int {
	n := 0
	for _, ss := range s.Sessions {
		n += len(ss.Turns)
	}
	return n
}

// TurnFormat says how FormatLoCoMoTurn writes a turn.
type TurnFormat struct {
	// Speaker prefixes the text with "Speaker: ". Questions name people ("What did <speaker> research?"),
	// so the name in the text helps BM25; it also enters the embedding, where it makes every turn of a
	// speaker look alike.
	Speaker bool
	// Captions appends " [image: caption]" to a turn that shares an image.
	Captions bool
}

// FormatLoCoMoTurn is the memory text of a turn: "Speaker: text [image: caption]", each part as f asks.
func FormatLoCoMoTurn(t LoCoMoTurn, f TurnFormat) string {
	s := t.Text
	if f.Speaker {
		s = t.Speaker + ": " + s
	}
	if c := strings.TrimSpace(t.BlipCaption); f.Captions && c != "" {
		s += " [image: " + c + "]"
	}
	return s
}

type rawLoCoMoSample struct {
	SampleID     string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []struct {
		Question          string          `json:"question"`
		Answer            json.RawMessage `json:"answer"`
		AdversarialAnswer json.RawMessage `json:"adversarial_answer"`
		Evidence          []string        `json:"evidence"`
		Category          int             `json:"category"`
	} `json:"qa"`
}

type rawLoCoMoTurn struct {
	Speaker     string `json:"speaker"`
	DiaID       string `json:"dia_id"`
	Text        string `json:"text"`
	BlipCaption string `json:"blip_caption"`
}

var (
	sessionKeyRE = regexp.MustCompile(`^session_(\d+)$`)
	sessionDTRE  = regexp.MustCompile(`^session_(\d+)_date_time$`)
)

// ReadLoCoMo loads a LoCoMo file (a JSON array of samples), decoding one sample at a time.
func ReadLoCoMo(r io.Reader) ([]LoCoMoSample, error) {
	var out []LoCoMoSample
	err := streamArray(r, func(i int, raw *rawLoCoMoSample) error {
		s, err := convertLoCoMo(raw)
		if err != nil {
			id := raw.SampleID
			if id == "" {
				id = "#" + strconv.Itoa(i)
			}
			return fmt.Errorf("sample %s: %w", id, err)
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("locomo: %w", err)
	}
	return out, nil
}

// LoadLoCoMoFile is ReadLoCoMo on a file.
func LoadLoCoMoFile(path string) ([]LoCoMoSample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadLoCoMo(f)
}

func convertLoCoMo(raw *rawLoCoMoSample) (LoCoMoSample, error) {
	s := LoCoMoSample{ID: raw.SampleID}
	if s.ID == "" {
		return s, fmt.Errorf("no sample_id")
	}
	if raw.Conversation == nil {
		return s, fmt.Errorf("no conversation")
	}
	str := func(key string) (string, error) {
		v, ok := raw.Conversation[key]
		if !ok {
			return "", nil
		}
		var x string
		if err := json.Unmarshal(v, &x); err != nil {
			return "", fmt.Errorf("%s: %w", key, err)
		}
		return x, nil
	}
	var err error
	if s.SpeakerA, err = str("speaker_a"); err != nil {
		return s, err
	}
	if s.SpeakerB, err = str("speaker_b"); err != nil {
		return s, err
	}
	dates := map[int]LoCoMoSession{}
	sessions := map[int][]rawLoCoMoTurn{}
	for key, v := range raw.Conversation {
		if m := sessionDTRE.FindStringSubmatch(key); m != nil {
			n, _ := strconv.Atoi(m[1])
			dt, err := str(key)
			if err != nil {
				return s, err
			}
			t, err := ParseLoCoMoTime(dt)
			if err != nil {
				return s, fmt.Errorf("%s: %w", key, err)
			}
			dates[n] = LoCoMoSession{Num: n, DateTime: dt, Time: t}
		} else if m := sessionKeyRE.FindStringSubmatch(key); m != nil {
			n, _ := strconv.Atoi(m[1])
			var turns []rawLoCoMoTurn
			if err := json.Unmarshal(v, &turns); err != nil {
				return s, fmt.Errorf("%s: %w", key, err)
			}
			sessions[n] = turns
		}
	}
	s.Dates = len(dates)
	turnIDs := map[string]bool{}
	for n, turns := range sessions {
		if len(turns) == 0 {
			continue
		}
		ss, ok := dates[n]
		if !ok {
			return s, fmt.Errorf("session_%d has turns but no session_%d_date_time", n, n)
		}
		for j, t := range turns {
			id, ok := NormalizeDiaID(t.DiaID)
			if !ok {
				if t.DiaID == "" {
					return s, fmt.Errorf("session_%d turn %d: no dia_id", n, j)
				}
				id = t.DiaID
			}
			turnIDs[id] = true
			ss.Turns = append(ss.Turns, LoCoMoTurn{Speaker: t.Speaker, DiaID: id, Text: t.Text, BlipCaption: t.BlipCaption})
		}
		s.Sessions = append(s.Sessions, ss)
	}
	sort.Slice(s.Sessions, func(i, j int) bool { return s.Sessions[i].Num < s.Sessions[j].Num })

	for i, q := range raw.QA {
		lq := LoCoMoQuestion{Index: i, Question: q.Question, Answer: q.Answer, Category: q.Category, RawEvidence: q.Evidence}
		if len(lq.Answer) == 0 {
			lq.Answer = q.AdversarialAnswer
		}
		ids, bad := NormalizeEvidence(q.Evidence)
		for _, id := range ids {
			if turnIDs[id] {
				lq.Evidence = append(lq.Evidence, id)
			} else {
				lq.Dropped = append(lq.Dropped, id)
			}
		}
		lq.Dropped = append(lq.Dropped, bad...)
		s.Questions = append(s.Questions, lq)
	}
	return s, nil
}
