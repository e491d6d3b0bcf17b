package consolidation

import (
	"regexp"
	"strings"
	"time"
)

// SegmentOptions configure how working memory is cut into episodes.
type SegmentOptions struct {
	// MaxGap: a silence longer than this starts a new episode. Default 30m.
	MaxGap time.Duration
	// TopicWindow is how many messages on each side of a candidate boundary are compared
	// for a topic shift. Default 3.
	TopicWindow int
	// TopicThreshold: a lexical cosine between the two windows below this is a topic
	// shift. Default 0.1 (same-topic chat windows typically score 0.2–0.5, unrelated 0).
	TopicThreshold float64
	// MinTopicWords: each window needs this many content words before its similarity
	// means anything ("ok thanks" is not a topic). Default 6.
	MinTopicWords int
	// Similarity scores the two windows' texts; nil means LexicalSimilarity. An embedding
	// cosine can be injected (it must be deterministic: replicas rerun nothing, but tests
	// and replays do).
	Similarity SimilarityFunc
	// MinEpisodeMessages: a topic shift never leaves an episode shorter than this. Time
	// gaps and explicit markers still cut anywhere. Default 2.
	MinEpisodeMessages int
	// MaxSummaryChars bounds an episode summary, in runes. Default 280.
	MaxSummaryChars int
	// MaxTags and MaxEntities bound an episode's tags and entities. Defaults 5 and 10.
	MaxTags     int
	MaxEntities int
	// ToolCallsEndTasks treats every tool message as TaskEnd (for runtimes that cannot
	// mark task completion). Default false.
	ToolCallsEndTasks bool
}

func (o SegmentOptions) withDefaults() SegmentOptions {
	defDur(&o.MaxGap, 30*time.Minute)
	defInt(&o.TopicWindow, 3)
	defFloat(&o.TopicThreshold, 0.1)
	defInt(&o.MinTopicWords, 6)
	if o.Similarity == nil {
		o.Similarity = LexicalSimilarity
	}
	defInt(&o.MinEpisodeMessages, 2)
	defInt(&o.MaxSummaryChars, 280)
	defInt(&o.MaxTags, 5)
	defInt(&o.MaxEntities, 10)
	return o
}

// Validate checks the options.
func (o SegmentOptions) Validate() error {
	var c check
	c.nonNegDur("segment.max_gap", o.MaxGap)
	c.nonNeg("segment.topic_window", float64(o.TopicWindow))
	c.unit("segment.topic_threshold", o.TopicThreshold)
	c.nonNeg("segment.min_topic_words", float64(o.MinTopicWords))
	c.nonNeg("segment.min_episode_messages", float64(o.MinEpisodeMessages))
	c.nonNeg("segment.max_summary_chars", float64(o.MaxSummaryChars))
	c.nonNeg("segment.max_tags", float64(o.MaxTags))
	c.nonNeg("segment.max_entities", float64(o.MaxEntities))
	return c.err
}

// Why an episode starts.
const (
	BoundaryStart   = "start"       // the first message
	BoundaryTimeGap = "time_gap"    // silence longer than MaxGap
	BoundaryMarker  = "task_marker" // the user says "next", "new task", "moving on"…
	BoundaryTaskEnd = "task_end"    // the previous task ended (TaskEnd message)
	BoundaryTopic   = "topic_shift" // lexical similarity between windows fell below the threshold
)

// taskMarker matches a user message that announces a new task.
var taskMarker = regexp.MustCompile(`(?i)^\W*(?:(?:ok(?:ay)?|alright|all right|right|so|now|great|thanks|thank you)\W+)*` +
	`(?:next\b|new (?:task|topic|question)\b|moving on\b|let'?s move on\b|move on\b|another (?:task|thing|question|topic)\b|` +
	`switching (?:to|gears)\b|change of (?:topic|subject)\b|different (?:topic|question|subject)\b|on another note\b|unrelated\b)`)

// Segment cuts a conversation into episodes. msgs must be in time order (see Session);
// an invalid message is an ErrInvalidInput error naming its index. Boundaries, in order of
// precedence: a time gap, an explicit task marker in a user message, the user message
// after a TaskEnd, and a topic shift (only before a user message, since users change
// topics). Episodes come back without IDs; the caller assigns them.
func Segment(msgs []Message, opts SegmentOptions) ([]Episode, error) {
	return segment(msgs, opts, nil)
}

// segment is Segment, with facts[i] saying whether the built-in extraction finds a fact in user message i
// (nil: episodes extract where their importance asks).
func segment(msgs []Message, opts SegmentOptions, facts []bool) ([]Episode, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := validateMessages(msgs); err != nil {
		return nil, err
	}
	g := segmenter{msgs: msgs, o: opts.withDefaults(), lexical: opts.Similarity == nil,
		terms: make([][]string, len(msgs)), termed: make([]bool, len(msgs))}
	var eps []Episode
	start, why := 0, BoundaryStart
	taskEnded := false
	for i := 1; i <= len(msgs); i++ {
		if i < len(msgs) {
			taskEnded = taskEnded || msgs[i-1].TaskEnd || (g.o.ToolCallsEndTasks && msgs[i-1].Role == RoleTool)
			b := g.boundary(start, i, taskEnded)
			if b == "" {
				continue
			}
			eps = append(eps, newEpisode(msgs[start:i], why, g.o, window(facts, start, i)))
			start, why, taskEnded = i, b, false
			continue
		}
		eps = append(eps, newEpisode(msgs[start:], why, g.o, window(facts, start, len(msgs))))
	}
	return eps, nil
}

// window is s[lo:hi], or nil for a nil s.
func window[T any](s []T, lo, hi int) []T {
	if s == nil {
		return nil
	}
	return s[lo:hi]
}

// segmenter cuts one conversation; it reads each message's content words once, however many windows hold it.
type segmenter struct {
	msgs    []Message
	o       SegmentOptions // with defaults
	lexical bool           // o.Similarity is LexicalSimilarity, scored from the cached words
	terms   [][]string     // contentWords of each message, once termed
	termed  []bool
}

// boundary says why an episode starting at start ends before msgs[i], or "".
func (g *segmenter) boundary(start, i int, taskEnded bool) string {
	msgs, m := g.msgs, g.msgs[i]
	if m.Time.Sub(msgs[i-1].Time) > g.o.MaxGap {
		return BoundaryTimeGap
	}
	if m.Role != RoleUser {
		return ""
	}
	switch {
	case taskMarker.MatchString(strings.TrimSpace(m.Content)):
		return BoundaryMarker
	case taskEnded:
		return BoundaryTaskEnd
	case i-start >= g.o.MinEpisodeMessages && g.topicShift(start, i):
		return BoundaryTopic
	}
	return ""
}

// topicShift: the similarity at i is below the threshold and is a local minimum, i.e. no
// later user turn within the window scores lower (TextTiling's idea: a right window that
// straddles the real boundary scores low too, so cut where the valley is deepest).
func (g *segmenter) topicShift(start, i int) bool {
	s, ok := g.topicScore(start, i)
	if !ok || s >= g.o.TopicThreshold {
		return false
	}
	for j := i + 1; j < min(len(g.msgs), i+g.o.TopicWindow); j++ {
		if g.msgs[j].Role != RoleUser {
			continue
		}
		if sj, ok := g.topicScore(start, j); ok && sj < s {
			return false
		}
	}
	return true
}

// topicScore compares the TopicWindow messages before i (not before start) with the
// TopicWindow messages from i on; ok is false when either has too few content words.
func (g *segmenter) topicScore(start, i int) (float64, bool) {
	lo, hi := max(start, i-g.o.TopicWindow), min(len(g.msgs), i+g.o.TopicWindow)
	if g.count(lo, i) < g.o.MinTopicWords || g.count(i, hi) < g.o.MinTopicWords {
		return 0, false
	}
	if g.lexical {
		// LexicalSimilarity of the joined texts: their content words are the messages' words in turn.
		return cosine(g.freq(lo, i), g.freq(i, hi)), true
	}
	return g.o.Similarity(joinContent(g.msgs[lo:i]), joinContent(g.msgs[i:hi])), true
}

func (g *segmenter) words(i int) []string {
	if !g.termed[i] {
		g.terms[i], g.termed[i] = contentWords(g.msgs[i].Content), true
	}
	return g.terms[i]
}

// count is how many content words msgs[lo:hi] hold.
func (g *segmenter) count(lo, hi int) int {
	n := 0
	for i := lo; i < hi; i++ {
		n += len(g.words(i))
	}
	return n
}

// freq counts the content words of msgs[lo:hi].
func (g *segmenter) freq(lo, hi int) map[string]float64 {
	tf := make(map[string]float64, g.count(lo, hi))
	for i := lo; i < hi; i++ {
		for _, w := range g.words(i) {
			tf[w]++
		}
	}
	return tf
}

func joinContent(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Content)
		b.WriteString("\n")
	}
	return b.String()
}
