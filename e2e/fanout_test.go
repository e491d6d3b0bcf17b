package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

type fanoutAnswer struct {
	Results []struct {
		UserID  string `json:"user_id"`
		AgentID string `json:"agent_id"`
	}
	Partial       bool
	MissingShards []struct{ Shard uint32 } `json:"missing_shards"`
}

// TestFanoutNamesShardsThatMissTheirDeadline: `memctl search --agent A` without --user searches every user of
// every shard; with one node paused (SIGSTOP) and one replica per shard, the shards it holds miss their
// deadline and the answer says so — partial, with those shards named — instead of waiting or dropping them.
func TestFanoutNamesShardsThatMissTheirDeadline(t *testing.T) {
	needProcesses(t)
	procs := []*proc{newProc(t, "n1"), newProc(t, "n2"), newProc(t, "n3")}
	for _, p := range procs {
		p.start("--bootstrap-expect", "3", "--join", procs[0].gossip, "--shards", "6", "--replicas", "1")
	}
	var status string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last status: %s", status)
			for _, p := range procs {
				p.dumpLog()
			}
		}
	})
	waitFor(t, 60*time.Second, "a healthy cluster", func() bool {
		code, body := do(t, procs[0].http, "", apiCall{"GET", "/v1/cluster/status", ""})
		status = body
		return code == 200 && strings.Contains(body, `"healthy":true`)
	})
	for i := range 12 {
		for _, agent := range []string{"bot", "other"} {
			body := fmt.Sprintf(`{"user_id":"u%d","agent_id":%q,"text":"order %d for %s was refunded"}`, i, agent, i, agent)
			if code, out := do(t, procs[i%3].http, "", apiCall{"POST", "/v1/memories", body}); code != 201 {
				t.Fatalf("put: %d %s", code, out)
			}
		}
	}
	search := func(args ...string) (fanoutAnswer, string, time.Duration) {
		t.Helper()
		start := time.Now()
		out, errOut, code := memctl(t, procs[0].http, append([]string{"-o", "json", "search", "--agent", "bot",
			"--k", "100", "--min-score", "0"}, args...)...)
		took := time.Since(start)
		var a fanoutAnswer
		if code != 0 || json.Unmarshal([]byte(out), &a) != nil {
			t.Fatalf("memctl search --agent: exit %d %s %s", code, out, errOut)
		}
		return a, errOut, took
	}
	whole, _, _ := search("refunded")
	users := map[string]bool{}
	for _, r := range whole.Results {
		if r.AgentID != "bot" {
			t.Fatalf("agent bot's search returned agent %q", r.AgentID)
		}
		users[r.UserID] = true
	}
	if whole.Partial || len(users) != 12 {
		t.Fatalf("whole fan-out: partial=%v, %d users of 12", whole.Partial, len(users))
	}

	if err := procs[2].cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	part, _, took := search("--shard-timeout", "500ms", "refunded")
	_ = procs[2].cmd.Process.Signal(syscall.SIGCONT)
	if !part.Partial || len(part.MissingShards) == 0 || len(part.MissingShards) == 6 {
		t.Fatalf("with n3 paused: partial=%v missing=%v", part.Partial, part.MissingShards)
	}
	if len(part.Results) == 0 || len(part.Results) >= len(whole.Results) {
		t.Fatalf("with n3 paused: %d results, %d when whole", len(part.Results), len(whole.Results))
	}
	if took > 10*time.Second {
		t.Errorf("a partial answer took %v with a 500ms shard deadline", took)
	}
	t.Logf("n3 paused: %d of 6 shards missing, %d results, answered in %v", len(part.MissingShards), len(part.Results), took)
	// The text form warns on stderr, one line per missing shard.
	_ = procs[2].cmd.Process.Signal(syscall.SIGSTOP)
	_, errOut, code := memctl(t, procs[0].http, "search", "--agent", "bot", "--shard-timeout", "300ms", "refunded")
	_ = procs[2].cmd.Process.Signal(syscall.SIGCONT)
	if code != 0 || !strings.Contains(errOut, "partial: shard") {
		t.Fatalf("text search with n3 paused: exit %d, stderr %q", code, errOut)
	}
}
