package memory

import (
	"crypto/rand"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// IDSource hands out time-ordered ids (ULIDs): lexical order is creation order, which keeps a
// user's memories in time order in the keyspace. Ids are decided before a command is proposed, so
// replicas never generate them. Safe for concurrent use.
type IDSource struct {
	mu      sync.Mutex
	entropy *ulid.MonotonicEntropy
}

// NewIDSource returns an IDSource seeded from crypto/rand.
func NewIDSource() *IDSource {
	return &IDSource{entropy: ulid.Monotonic(rand.Reader, 0)}
}

// New returns a fresh id for time t.
func (s *IDSource) New(t time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ulid.MustNew(ulid.Timestamp(t), s.entropy).String()
}

// ValidID reports whether id has the form of an id this package hands out.
func ValidID(id string) bool {
	_, err := ulid.ParseStrict(id)
	return err == nil
}
