package e2e

import (
	"strings"
	"testing"
)

// TestUpdateWithMemctl: `memctl update` changes a memory in place (the new text is found, the old is not, the
// history shows the UPDATE), and bad input ends with a non-zero exit and one line.
func TestUpdateWithMemctl(t *testing.T) {
	needProcesses(t)
	p := startDevNode(t)
	id, errOut, code := memctl(t, p.http, "put", "--user", "alice", "My car is a blue hatchback")
	id = strings.TrimSpace(id)
	if code != 0 {
		t.Fatalf("put: exit %d: %s", code, errOut)
	}
	out, errOut, code := memctl(t, p.http, "update", "--user", "alice", "--tag", "car", id, "My car is a red convertible")
	if code != 0 || !strings.Contains(out, "updated "+id) {
		t.Fatalf("update: exit %d: %s %s", code, out, errOut)
	}
	out, _, _ = memctl(t, p.http, "-o", "json", "search", "--user", "alice", "--min-score", "0", "convertible")
	if !strings.Contains(out, "red convertible") || strings.Contains(out, "blue hatchback") {
		t.Errorf("search after update: %s", out)
	}
	if out, _, _ = memctl(t, p.http, "history", "--user", "alice", id); !strings.Contains(out, "UPDATE") {
		t.Errorf("history: %s", out)
	}
	for _, args := range [][]string{
		{"update", "--user", "alice", id},                                // nothing to change
		{"update", id, "text"},                                           // no user
		{"update", "--user", "alice", "--importance", "3", id},           // out of range
		{"update", "--user", "alice", "01JD0000000000000000000000", "x"}, // no such memory
	} {
		_, errOut, code := memctl(t, p.http, args...)
		if code == 0 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}
