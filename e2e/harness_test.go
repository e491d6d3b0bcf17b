package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memcluster/memcluster/client"
	"github.com/memcluster/memcluster/internal/testport"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binaries builds memnode and memctl once per test binary run.
func binaries(t *testing.T) (memnode, memctl string) {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "memcluster-e2e-bin")
		if buildErr != nil {
			return
		}
		for _, name := range []string{"memnode", "memctl"} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, name), "../cmd/"+name)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("build %s: %v\n%s", name, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, "memnode"), filepath.Join(binDir, "memctl")
}

// freeAddr is a loopback address outside the kernel's ephemeral range (see testport).
func freeAddr(t *testing.T) string {
	t.Helper()
	return testport.MustAddr(t)
}

// proc is one memnode process.
type proc struct {
	t       *testing.T
	id      string
	args    []string
	dir     string
	http    string
	gossip  string
	cmd     *exec.Cmd
	logPath string
}

func newProc(t *testing.T, id string) *proc {
	p := &proc{t: t, id: id, dir: t.TempDir(), http: freeAddr(t), gossip: freeAddr(t)}
	// A failed test shows what each of its nodes logged last (this runs after the node is killed and before
	// its directory is removed).
	t.Cleanup(func() {
		if t.Failed() && p.logPath != "" {
			p.dumpLog()
		}
	})
	return p
}

func (p *proc) start(extra ...string) {
	p.t.Helper()
	memnode, _ := binaries(p.t)
	args := append([]string{"--node-id", p.id, "--data-dir", p.dir, "--http-addr", p.http,
		"--raft-addr", freeAddrOnce(p), "--gossip-addr", p.gossip, "--gossip-profile", "local",
		"--log-format", "json"}, extra...)
	p.args = args
	p.cmd = exec.Command(memnode, args...)
	p.logPath = filepath.Join(p.dir, fmt.Sprintf("memnode-%d.log", time.Now().UnixNano()))
	logf, err := os.Create(p.logPath)
	if err != nil {
		p.t.Fatal(err)
	}
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { p.kill() })
}

var raftAddrs sync.Map // proc -> raft address, stable across restarts

func freeAddrOnce(p *proc) string {
	if a, ok := raftAddrs.Load(p); ok {
		return a.(string)
	}
	a := freeAddr(p.t)
	raftAddrs.Store(p, a)
	return a
}

// kill sends SIGKILL: no shutdown path runs, as in a crash.
func (p *proc) kill() {
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		_, _ = p.cmd.Process.Wait()
		p.cmd = nil
	}
}

func (p *proc) client(t *testing.T) *client.Client {
	c, err := client.New("http://"+p.http, client.WithTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (p *proc) dumpLog() {
	b, _ := os.ReadFile(p.logPath)
	lines := strings.Split(string(b), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	p.t.Logf("--- last log lines of %s:\n%s", p.id, strings.Join(lines, "\n"))
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startDevNode starts one `memnode --dev` and waits until memctl health passes against it.
func startDevNode(t *testing.T) *proc {
	t.Helper()
	p := newProc(t, "dev")
	p.start("--dev")
	waitFor(t, 30*time.Second, "a ready dev node", func() bool {
		_, _, code := memctl(t, p.http, "health")
		return code == 0
	})
	return p
}

// memctl runs the memctl binary and returns stdout, stderr and the exit code.
func memctl(t *testing.T, addr string, args ...string) (string, string, int) {
	t.Helper()
	_, bin := binaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--addr", "http://" + addr}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}
