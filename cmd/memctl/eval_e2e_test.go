package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/client"
	"github.com/memcluster/memcluster/internal/testport"
)

// Recall floors of TestEvalAgainstRealNode, set well below the measured values (see the test) so that only a
// broken harness or a real retrieval regression trips them, not noise.
const (
	// evalE2ELoCoMoFloor bounds recall@10 over categories 1-4 of the first 20 questions of conv-26 in hybrid
	// mode (measured 0.546 on a dev node with the hashed embedder, 2026-11).
	evalE2ELoCoMoFloor = 0.35
)

// evalDataFile returns the path of a shared evaluation file: ../shared/data relative to the repository root
// (never copied into it), or EVAL_DATA_DIR. A missing file skips the test, except under CI=true where it fails.
func evalDataFile(t *testing.T, rel string) string {
	t.Helper()
	dir := os.Getenv("EVAL_DATA_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "data") // from <repo>/cmd/memctl
	}
	p := filepath.Join(dir, rel)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("evaluation data %s missing under CI: %v", p, err)
		}
		t.Skipf("evaluation data %s not present: %v", p, err)
	}
	return p
}

// evalFreeAddr returns a free local TCP address.
func evalFreeAddr(t *testing.T) string {
	t.Helper()
	return testport.MustAddr(t)
}

// startEvalNode builds memnode (the same way e2e/harness_test.go does) and starts one --dev node on free
// ports; it is killed when the test ends. It returns the node's HTTP address once the node is ready.
func startEvalNode(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "memnode")
	build := exec.Command("go", "build", "-o", bin, "github.com/memcluster/memcluster/cmd/memnode")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build memnode: %v\n%s", err, out)
	}
	dir := t.TempDir()
	httpAddr := evalFreeAddr(t)
	logPath := filepath.Join(dir, "memnode.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--dev", "--node-id", "evale2e", "--data-dir", filepath.Join(dir, "data"),
		"--http-addr", httpAddr, "--raft-addr", evalFreeAddr(t), "--gossip-addr", evalFreeAddr(t),
		"--gossip-profile", "local", "--log-format", "json")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_, _ = cmd.Process.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			lines := strings.Split(string(b), "\n")
			t.Logf("--- last memnode log lines:\n%s", strings.Join(lines[max(0, len(lines)-30):], "\n"))
		}
	})
	c, err := client.New(httpAddr, client.WithTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for c.Ready(context.Background()) != nil {
		if time.Now().After(deadline) {
			t.Fatal("memnode not ready after 60s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "http://" + httpAddr
}

// TestEvalAgainstRealNode runs a small slice of the evaluation against a real memnode process: 20 questions
// of one LoCoMo conversation and the LongMemEval format sample. It guards the harness end to end (ingest,
// search, id mapping, metrics, cleanup) and retrieval quality against a floor. It runs in a few seconds after
// the build; under CI=true it never skips.
func TestEvalAgainstRealNode(t *testing.T) {
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("builds memnode and runs a process")
	}
	locomo := evalDataFile(t, "locomo/locomo-dev.json")
	lme := evalDataFile(t, "longmemeval/longmemeval-format-sample.json")
	addr := startEvalNode(t)

	out, stderr, err := run(t, nil, "", "--addr", addr, "--timeout", "60s", "-o", "json", "eval", "locomo",
		"--file", locomo, "--conversations", "conv-26", "--questions", "20", "--k", "1,5,10")
	if err != nil {
		t.Fatalf("eval locomo: %v\n%s", err, stderr)
	}
	var rep locomoReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("eval locomo printed %q: %v", out, err)
	}
	t.Logf("locomo conv-26, 20 questions: overall %v (n=%d), category 5 %v, ingest %.2fs, p50 %.1f ms",
		rep.Overall.Recall, rep.Overall.Questions, rep.Category5.Recall, rep.IngestSeconds, rep.QueryP50Ms)
	if rep.Counts.Asked != 20 || rep.Counts.Memories < 400 || rep.Overall.Questions == 0 || len(rep.Overall.Recall) != 3 {
		t.Fatalf("counts %+v overall %+v", rep.Counts, rep.Overall)
	}
	if r10 := rep.Overall.Recall[2]; r10.K != 10 || r10.Value < evalE2ELoCoMoFloor {
		t.Errorf("recall@10 (categories 1-4) %.3f, below the floor %.2f", r10.Value, evalE2ELoCoMoFloor)
	}
	if r := rep.Overall.Recall; r[0].Value > r[1].Value || r[1].Value > r[2].Value {
		t.Errorf("recall does not grow with k: %v", r)
	}
	if rep.Cleanup.Deleted != rep.Counts.Memories {
		t.Errorf("deleted %d of %d memories", rep.Cleanup.Deleted, rep.Counts.Memories)
	}
	// Nothing of the conversation's user is left.
	c, err := client.New(addr)
	if err != nil {
		t.Fatal(err)
	}
	left, err := c.Search(context.Background(), apiv1.SearchRequest{UserID: rep.Settings.UserPrefix + "conv-26",
		Query: "Caroline Melanie", K: 10, MinScore: new(0.0)})
	if err != nil || len(left.Results) != 0 {
		t.Errorf("after cleanup: %d results, %v", len(left.Results), err)
	}

	// The format sample is the oracle variant: every haystack session is an answer session, so any working
	// harness finds all of them within the top 5 sessions.
	out, stderr, err = run(t, nil, "", "--addr", addr, "--timeout", "60s", "-o", "json", "eval", "longmemeval",
		"--file", lme, "--k", "1,5")
	if err != nil {
		t.Fatalf("eval longmemeval: %v\n%s", err, stderr)
	}
	var lrep lmeReport
	if err := json.Unmarshal([]byte(out), &lrep); err != nil {
		t.Fatalf("eval longmemeval printed %q: %v", out, err)
	}
	t.Logf("longmemeval sample: any %v all %v", lrep.Overall.RecallAny, lrep.Overall.RecallAll)
	if lrep.Counts.Asked != 6 || len(lrep.PerType) != 6 || lrep.Overall.RecallAll == nil {
		t.Fatalf("counts %+v, %d types", lrep.Counts, len(lrep.PerType))
	}
	if got := lrep.Overall.RecallAll[1]; got.K != 5 || got.Value != 1 {
		t.Errorf("recall_all@5 on the oracle sample %v, want 1", got)
	}
	if lrep.Cleanup.Deleted != lrep.Counts.Memories {
		t.Errorf("deleted %d of %d memories", lrep.Cleanup.Deleted, lrep.Counts.Memories)
	}
}
