package sim

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// childEnv marks the child process that runs the schedules (isolate).
const childEnv = "MEMCLUSTER_SIM_CHILD"

// isolate runs TestSimSchedules' seeds in a child process of this test binary and reports its result.
//
// A panic in raft's goroutine kills the process, and with it every seed's verdict: in a child, the parent still
// reports it, with the child's output (which, with -v, names the seeds that were running). Upstream
// hashicorp/raft#697 (DESIGN.md, fixed in the fork) panics a follower so ("log not found" in processLogs):
// with -sim.strict=false, for a run against upstream raft, that panic is recognised by its stack, logged KNOWN
// UPSTREAM like the livelock form of the same bug, and the schedules run once more; a second panic, or any
// other failure, fails the test.
func isolate(t *testing.T) {
	t.Helper()
	args := []string{"-test.run=^TestSimSchedules$", "-test.count=1", "-test.v"}
	flag.Visit(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, "sim.") || f.Name == "test.timeout" || f.Name == "test.parallel" {
			args = append(args, fmt.Sprintf("-%s=%s", f.Name, f.Value))
		}
	})
	for attempt := 1; ; attempt++ {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), childEnv+"=1")
		out, err := cmd.CombinedOutput()
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "seeds in") || strings.Contains(line, "KNOWN UPSTREAM") {
				t.Log(strings.TrimSpace(line))
			}
		}
		switch {
		case err == nil:
			return
		case raft697Panic(out) && attempt == 1 && !*flagStrict:
			t.Logf("KNOWN UPSTREAM hashicorp/raft#697: a follower panicked inside raft (log not found in processLogs); "+
				"running the schedules again (-sim.strict fails it):\n%s", panicLines(out))
			continue
		default:
			t.Fatalf("the schedules failed (%v):\n%s", err, out)
		}
	}
}

// raft697Panic reports whether out ends in hashicorp/raft#697's panic: log not found, from processLogs on a
// follower (called by appendEntries). The same panic on a leader (from leaderLoop) is not that bug: a leader
// applying an entry its log does not hold is what the disk faults look for (disk.go).
func raft697Panic(out []byte) bool {
	i := bytes.Index(out, []byte("panic: log not found"))
	if i < 0 {
		return false
	}
	stack := out[i:]
	return bytes.Contains(stack, []byte("hashicorp/raft.(*Raft).processLogs")) &&
		bytes.Contains(stack, []byte("hashicorp/raft.(*Raft).appendEntries")) &&
		!bytes.Contains(stack, []byte("hashicorp/raft.(*Raft).leaderLoop"))
}

// panicLines is the panic and the frames under it.
func panicLines(out []byte) string {
	i := bytes.Index(out, []byte("panic: "))
	if i < 0 {
		return ""
	}
	lines := strings.Split(string(out[i:]), "\n")
	return strings.Join(lines[:min(len(lines), 12)], "\n")
}

func TestRaft697PanicIsRecognisedByItsStack(t *testing.T) {
	out := []byte("=== RUN   TestSimSchedules/seeds/seed=7\npanic: log not found\n\ngoroutine 7914 [running]:\n" +
		"github.com/hashicorp/raft.(*Raft).processLogs(0x12ad2a766588, 0x80, 0x0)\n" +
		"\t/root/go/pkg/mod/github.com/hashicorp/raft@v1.8.0/raft.go:1333 +0x8a7\n" +
		"github.com/hashicorp/raft.(*Raft).appendEntries(0x12ad2a766588, {0x1, 0x0})\n" +
		"\t/work/main/third_party/raft/raft.go:1616 +0x1234\n")
	if !raft697Panic(out) {
		t.Fatal("raft#697's panic not recognised")
	}
	leader := []byte("panic: log not found\n\ngoroutine 12 [running]:\n" +
		"github.com/hashicorp/raft.(*Raft).processLogs(0x12ad2a766588, 0x80, 0x0)\n" +
		"\t/work/main/third_party/raft/raft.go:1353 +0x8a7\n" +
		"github.com/hashicorp/raft.(*Raft).leaderLoop(0x12ad2a766588)\n" +
		"\t/work/main/third_party/raft/raft.go:826 +0x99\n")
	if raft697Panic(leader) {
		t.Fatal("a leader's panic taken for raft#697's")
	}
	if raft697Panic([]byte("panic: log not found\n\ngoroutine 1 [running]:\ngithub.com/memcluster/memcluster/sim.Run()\n")) {
		t.Fatal("a panic elsewhere taken for raft#697's")
	}
}
