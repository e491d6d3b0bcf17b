package cluster

import (
	"bytes"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
)

// logTail keeps the last lines every node of a test cluster logged, so that a failing test can show what the
// cluster did just before it failed without flooding passing runs.
type logTail struct {
	mu         sync.Mutex
	lines      []string
	next       int
	lastStatus atomic.Value
}

const logTailLines = 400

func (l *logTail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if len(l.lines) < logTailLines {
			l.lines = append(l.lines, line)
			continue
		}
		l.lines[l.next] = line
		l.next = (l.next + 1) % logTailLines
	}
	return len(p), nil
}

func (l *logTail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b bytes.Buffer
	for i := range l.lines {
		b.WriteString(l.lines[(l.next+i)%len(l.lines)])
		b.WriteByte('\n')
	}
	return b.String()
}

// logger returns node id's logger: into the tail at Info, and to stderr at Debug when MEMCLUSTER_TEST_LOG is set.
func (c *testCluster) logger(id string) *slog.Logger {
	if os.Getenv("MEMCLUSTER_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("node", id)
	}
	return slog.New(slog.NewTextHandler(c.logs, &slog.HandlerOptions{Level: slog.LevelInfo})).With("node", id)
}
