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
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := validateMessages(msgs); err != nil {
		return nil, err
	}
	o := opts.withDefaults()
	var eps []Episode
	start, why := 0, BoundaryStart
	taskEnded := false
	for i := 1; i <= len(msgs); i++ {
		if i < len(msgs) {
			taskEnded = taskEnded || msgs[i-1].TaskEnd || (o.ToolCallsEndTasks && msgs[i-1].Role == RoleTool)
			b := boundary(msgs, start, i, taskEnded, o)
			if b == "" {
				continue
			}
			eps = append(eps, newEpisode(msgs[start:i], why, o))
			start, why, taskEnded = i, b, false
			continue
		}
		eps = append(eps, newEpisode(msgs[start:], why, o))
	}
	return eps, nil
}

// boundary says why an episode starting at start ends before msgs[i], or "".
func boundary(msgs []Message, start, i int, taskEnded bool, o SegmentOptions) string {
	m := msgs[i]
	if m.Time.Sub(msgs[i-1].Time) > o.MaxGap {
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
	case i-start >= o.MinEpisodeMessages && topicShift(msgs, start, i, o):
		return BoundaryTopic
	}
	return ""
}

// topicShift: the similarity at i is below the threshold and is a local minimum, i.e. no
// later user turn within the window scores lower (TextTiling's idea: a right window that
// straddles the real boundary scores low too, so cut where the valley is deepest).
func topicShift(msgs []Message, start, i int, o SegmentOptions) bool {
	s, ok := topicScore(msgs, start, i, o)
	if !ok || s >= o.TopicThreshold {
		return false
	}
	for j := i + 1; j < min(len(msgs), i+o.TopicWindow); j++ {
		if msgs[j].Role != RoleUser {
			continue
		}
		if sj, ok := topicScore(msgs, start, j, o); ok && sj < s {
			return false
		}
	}
	return true
}

// topicScore compares the TopicWindow messages before i (not before start) with the
// TopicWindow messages from i on; ok is false when either has too few content words.
func topicScore(msgs []Message, start, i int, o SegmentOptions) (float64, bool) {
	left := msgs[max(start, i-o.TopicWindow):i]
	right := msgs[i:min(len(msgs), i+o.TopicWindow)]
	if len(windowTerms(left)) < o.MinTopicWords || len(windowTerms(right)) < o.MinTopicWords {
		return 0, false
	}
	return o.Similarity(joinContent(left), joinContent(right)), true
}

func joinContent(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Content)
		b.WriteString("\n")
	}
	return b.String()
}

func windowTerms(msgs []Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, contentWords(m.Content)...)
	}
	return out
}
