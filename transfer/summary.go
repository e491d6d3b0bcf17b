package transfer

import (
	"sort"
	"time"

	"github.com/memcluster/memcluster/apiv1"
)

// Counts is what happened to the items of one kind.
type Counts struct {
	Exported  int `json:"exported,omitempty"`
	Created   int `json:"created,omitempty"`
	Updated   int `json:"updated,omitempty"`
	Unchanged int `json:"unchanged,omitempty"`
	Failed    int `json:"failed,omitempty"`
}

// LineError is an import line that failed, by its line number in the file (1 is the header).
type LineError struct {
	Line int    `json:"line"`
	Err  string `json:"error"`
}

// Summary is the outcome of an export or an import.
type Summary struct {
	Users   int               `json:"users"`
	Lines   int               `json:"lines"` // item lines read or written, the header not counted
	Kinds   map[string]Counts `json:"kinds"`
	Errors  []LineError       `json:"errors,omitempty"`
	Seconds float64           `json:"seconds"`
}

// Progress is reported as work goes on: lines so far, and for an import the bytes of the file read.
type Progress struct {
	Lines int    `json:"lines"`
	Bytes int64  `json:"bytes,omitempty"`
	User  string `json:"user,omitempty"`
}

func newSummary() *Summary { return &Summary{Kinds: map[string]Counts{}} }

func (s *Summary) add(kind string, f func(*Counts)) {
	c := s.Kinds[kind]
	f(&c)
	s.Kinds[kind] = c
}

func (s *Summary) addImport(resp apiv1.ImportResponse) {
	for k, c := range resp.Counts {
		s.add(k, func(t *Counts) {
			t.Created, t.Updated, t.Unchanged = t.Created+c.Created, t.Updated+c.Updated, t.Unchanged+c.Unchanged
		})
	}
}

func (s *Summary) fail(line int, kind string, err error) {
	s.add(kind, func(c *Counts) { c.Failed++ })
	s.Errors = append(s.Errors, LineError{Line: line, Err: err.Error()})
}

// Changed is how many items an import created or updated.
func (s *Summary) Changed() int {
	n := 0
	for _, c := range s.Kinds {
		n += c.Created + c.Updated
	}
	return n
}

// KindNames lists the kinds of the summary, sorted.
func (s *Summary) KindNames() []string {
	out := make([]string, 0, len(s.Kinds))
	for k := range s.Kinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (s *Summary) finish(start time.Time) { s.Seconds = time.Since(start).Seconds() }
