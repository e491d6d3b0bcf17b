package consolidation

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Role says who wrote a message.
type Role string

// The roles of a conversation.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one turn of a conversation.
type Message struct {
	// ID identifies the message to provenance (optional; facts cite it as their source).
	ID      string    `json:"id,omitempty"`
	Role    Role      `json:"role"`
	Content string    `json:"content"`
	Time    time.Time `json:"time"`
	// TaskEnd is set by the agent runtime on the message that completes a task (typically
	// the result of the last tool call). The next user message starts a new episode.
	TaskEnd bool `json:"task_end,omitempty"`
}

func (m Message) validate() error {
	switch {
	case m.Role != RoleUser && m.Role != RoleAssistant && m.Role != RoleTool:
		return fmt.Errorf("%w: message role %q (want user, assistant or tool)", ErrInvalidInput, m.Role)
	case strings.TrimSpace(m.Content) == "":
		return fmt.Errorf("%w: message content is empty", ErrInvalidInput)
	case !utf8.ValidString(m.Content):
		return fmt.Errorf("%w: message content is not valid UTF-8", ErrInvalidInput)
	case m.Time.IsZero():
		return fmt.Errorf("%w: message time is missing", ErrInvalidInput)
	}
	return nil
}

// validateMessages checks every message and that times do not go backwards.
func validateMessages(msgs []Message) error {
	for i, m := range msgs {
		if err := m.validate(); err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
		if i > 0 && m.Time.Before(msgs[i-1].Time) {
			return fmt.Errorf("message %d: %w: time %s is before the previous message's %s", i, ErrInvalidInput,
				m.Time.Format(time.RFC3339), msgs[i-1].Time.Format(time.RFC3339))
		}
	}
	return nil
}
