package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// maxStdin bounds what "-" reads; far above any server text limit, so the
// server still reports the real limit, but a runaway pipe cannot eat memory.
const maxStdin = 8 << 20

// textArg joins args with spaces, or reads in when the only arg is "-". A
// trailing newline from echo or a file is dropped. what names the argument in
// errors ("TEXT", "QUERY").
func textArg(args []string, in io.Reader, what string) (string, error) {
	if len(args) == 0 {
		return "", fmt.Errorf("missing %s (give it as arguments, or - to read stdin)", what)
	}
	var s string
	if len(args) == 1 && args[0] == "-" {
		b, err := io.ReadAll(io.LimitReader(in, maxStdin+1))
		if err != nil {
			return "", fmt.Errorf("read %s from stdin: %w", what, err)
		}
		if len(b) > maxStdin {
			return "", fmt.Errorf("%s on stdin is larger than %d bytes", what, maxStdin)
		}
		s = strings.TrimRight(string(b), "\r\n")
	} else {
		s = strings.Join(args, " ")
	}
	if strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("%s is empty", what)
	}
	return s, nil
}

// parseTime reads an RFC 3339 flag value.
func parseTime(flag, v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("--%s %q: want RFC 3339 like 2025-01-02T15:04:05Z", flag, v)
	}
	return t, nil
}

// requireUser is the one check every per-user command makes before dialling.
func requireUser(u string) error {
	if u == "" {
		return errors.New("--user is required")
	}
	return nil
}

// idArg returns the single ID argument.
func idArg(args []string) (string, error) {
	switch len(args) {
	case 0:
		return "", errors.New("missing ID")
	case 1:
		if args[0] == "" {
			return "", errors.New("ID is empty")
		}
		return args[0], nil
	}
	return "", fmt.Errorf("want one ID, got %d arguments", len(args))
}
