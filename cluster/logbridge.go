package cluster

import (
	"bytes"
	"context"
	"io"
	"log"
	"log/slog"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// hclogFor gives raft an hclog.Logger whose lines land in our slog handler. raft logs a lot at info level during
// normal elections, so only warnings and above pass by default.
func hclogFor(l *slog.Logger, name string) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:        name,
		Level:       hclog.Warn,
		Output:      &slogWriter{l: l.With("component", name)},
		JSONFormat:  false,
		DisableTime: true,
	})
}

// stdlogFor gives memberlist a *log.Logger; its "[LEVEL]" prefixes are mapped onto slog levels.
func stdlogFor(l *slog.Logger, name string) *log.Logger {
	return log.New(&slogWriter{l: l.With("component", name)}, "", 0)
}

type slogWriter struct{ l *slog.Logger }

func (w *slogWriter) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(bytes.TrimRight(p, "\n")))
	lvl := slog.LevelInfo
	switch {
	case strings.Contains(msg, "[ERR"):
		lvl = slog.LevelError
	case strings.Contains(msg, "[WARN"):
		lvl = slog.LevelWarn
	case strings.Contains(msg, "[DEBUG"), strings.Contains(msg, "[TRACE"):
		lvl = slog.LevelDebug
	}
	w.l.Log(context.Background(), lvl, msg)
	return len(p), nil
}

var _ io.Writer = (*slogWriter)(nil)
