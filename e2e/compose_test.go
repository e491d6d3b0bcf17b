package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The container path an adopter takes: `make image`, then `docker compose -f deploy/compose.yaml up -d`, a 3-node
// cluster on 127.0.0.1:7480, 7490 and 7500. This test is the only one in the suite that uses those ports (every
// other test listens on ports the kernel picks, and packages run one at a time).
const (
	composeProject = "memclustere2e" // fixed, so that a leftover of an aborted run is taken down first
	composeImage   = "memcluster-e2e:dev"
)

var composePorts = []string{"7480", "7490", "7500"}

func TestComposeClusterServesAndSurvivesARestart(t *testing.T) {
	needProcesses(t)
	started := time.Now()
	needDocker(t)
	compose := composeCommand(t)
	binaries(t) // memctl on the host, built before any clock below starts
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "deploy", "compose.yaml")
	dc := func(timeout time.Duration, args ...string) (string, error) {
		full := append(append(append([]string(nil), compose[1:]...), "-p", composeProject, "-f", file), args...)
		return runCmd(timeout, root, []string{"MEMCLUSTER_IMAGE=" + composeImage}, compose[0], full...)
	}

	// A previous run killed before its cleanup left containers and volumes under the same project name.
	if out, err := dc(2*time.Minute, "down", "-v", "--remove-orphans"); err != nil {
		t.Fatalf("compose down (leftovers): %v\n%s", err, out)
	}
	for _, p := range composePorts {
		l, err := net.Listen("tcp", "127.0.0.1:"+p)
		if err != nil {
			t.Fatalf("port 127.0.0.1:%s is taken (make cluster or make run still going?): %v", p, err)
		}
		l.Close()
	}

	_, _ = runCmd(time.Minute, root, nil, "docker", "rmi", composeImage) // else a leftover stays behind untagged
	t0 := time.Now()
	if out, err := runCmd(5*time.Minute, root, nil, "make", "image", "IMAGE=memcluster-e2e"); err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	t.Logf("make image: %v", time.Since(t0).Round(time.Millisecond))
	t.Cleanup(func() {
		_, _ = runCmd(time.Minute, root, nil, "docker", "rmi", composeImage)
	})

	t.Cleanup(func() {
		if t.Failed() {
			out, _ := dc(time.Minute, "logs", "--no-color", "--tail", "80")
			t.Logf("compose logs:\n%s", out)
		}
		if out, err := dc(2*time.Minute, "down", "-v", "--remove-orphans"); err != nil {
			t.Errorf("compose down -v: %v\n%s", err, out)
		}
	})
	t0 = time.Now()
	if out, err := dc(2*time.Minute, "up", "-d"); err != nil {
		t.Fatalf("compose up -d: %v\n%s", err, out)
	}
	t.Logf("up -d: %v", time.Since(t0).Round(time.Millisecond))
	waitComposeHealthy(t, dc, "7480", 90*time.Second)
	t.Logf("up -d to a healthy cluster: %v", time.Since(t0).Round(time.Millisecond))

	// Write through node 2, search through node 3.
	out, errOut, code := memctl(t, "127.0.0.1:7490", "put", "--user", "compose-alice", "--tag", "travel",
		"I prefer morning flights to Lisbon")
	if code != 0 {
		t.Fatalf("put via 7490: exit %d: %s", code, errOut)
	}
	id := strings.TrimSpace(out)
	if id == "" {
		t.Fatal("put printed no id")
	}
	if !searchFinds(t, "127.0.0.1:7500", "compose-alice", "morning flights", id) {
		t.Fatalf("search via 7500 does not find %s", id)
	}

	// A restarted container keeps its volume and rejoins by itself.
	t0 = time.Now()
	if out, err := dc(time.Minute, "restart", "n2"); err != nil {
		t.Fatalf("compose restart n2: %v\n%s", err, out)
	}
	waitComposeHealthy(t, dc, "7490", 90*time.Second)
	t.Logf("restart n2 to a healthy cluster: %v", time.Since(t0).Round(time.Millisecond))
	if _, errOut, code := memctl(t, "127.0.0.1:7490", "get", "--user", "compose-alice", id); code != 0 {
		t.Fatalf("get %s via the restarted n2: exit %d: %s", id, code, errOut)
	}
	if !searchFinds(t, "127.0.0.1:7490", "compose-alice", "Lisbon", id) {
		t.Fatalf("search via the restarted n2 does not find %s", id)
	}
	out, errOut, code = memctl(t, "127.0.0.1:7490", "put", "--user", "compose-bob", "written after the restart")
	if code != 0 {
		t.Fatalf("put via the restarted n2: exit %d: %s", code, errOut)
	}
	if !searchFinds(t, "127.0.0.1:7480", "compose-bob", "restart", strings.TrimSpace(out)) {
		t.Fatal("search via n1 does not find the write made through the restarted n2")
	}
	t.Logf("whole test: %v", time.Since(started).Round(time.Millisecond))
}

// needDocker skips without a reachable Docker daemon, except under CI=true, where that is a failure.
func needDocker(t *testing.T) {
	t.Helper()
	out, err := runCmd(30*time.Second, "", nil, "docker", "info", "--format", "{{.ServerVersion}}")
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true needs Docker: docker info: %v\n%s", err, out)
	}
	t.Skipf("no Docker here (docker info: %v)", err)
}

// composeCommand is `docker compose` (v2) when the plugin is there, else docker-compose (v1.29 reads the file too).
func composeCommand(t *testing.T) []string {
	t.Helper()
	if _, err := runCmd(30*time.Second, "", nil, "docker", "compose", "version"); err == nil {
		return []string{"docker", "compose"}
	}
	if _, err := exec.LookPath("docker-compose"); err == nil {
		return []string{"docker-compose"}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI=true needs Docker Compose: neither `docker compose` nor docker-compose works")
	}
	t.Skip("no Docker Compose here")
	return nil
}

// runCmd runs name with args in dir under a deadline and returns its combined output.
func runCmd(timeout time.Duration, dir string, env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s %s: no answer within %v", name, strings.Join(args, " "), timeout)
	}
	return out.String(), err
}

// waitComposeHealthy waits until the node on port says the cluster is healthy and Docker's HEALTHCHECK (memctl
// health inside each container) passes on every container of the project.
func waitComposeHealthy(t *testing.T, dc func(time.Duration, ...string) (string, error), port string, d time.Duration) {
	t.Helper()
	var last, logged string
	start := time.Now()
	deadline := start.Add(d)
	for !composeHealthy(t, dc, port, &last) {
		if last != logged { // progress, for a slow CI run's log
			t.Logf("%v: %s", time.Since(start).Round(time.Millisecond), last)
			logged = last
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for a healthy compose cluster (asking 127.0.0.1:%s); last: %s", d, port, last)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func composeHealthy(t *testing.T, dc func(time.Duration, ...string) (string, error), port string, last *string) bool {
	t.Helper()
	if _, errOut, code := memctl(t, "127.0.0.1:"+port, "--timeout", "3s", "cluster", "status", "--check"); code != 0 {
		*last = fmt.Sprintf("cluster status --check: exit %d: %s", code, strings.TrimSpace(errOut))
		return false
	}
	ids, err := dc(30*time.Second, "ps", "-q")
	if err != nil {
		*last = "compose ps: " + err.Error()
		return false
	}
	containers := strings.Fields(ids)
	if len(containers) != 3 {
		*last = fmt.Sprintf("compose ps: %d containers", len(containers))
		return false
	}
	health, err := runCmd(30*time.Second, "", nil, "docker", append([]string{"inspect", "-f", "{{.State.Health.Status}}"}, containers...)...)
	if err != nil || strings.Count(health, "healthy") != 3 || strings.Contains(health, "unhealthy") {
		*last = "container health: " + strings.Join(strings.Fields(health), ",")
		return false
	}
	return true
}

// searchFinds reports whether a search for user through addr returns the memory id.
func searchFinds(t *testing.T, addr, user, query, id string) bool {
	t.Helper()
	out, errOut, code := memctl(t, addr, "-o", "json", "search", "--user", user, "--min-score", "0", query)
	if code != 0 {
		t.Fatalf("search via %s: exit %d: %s", addr, code, errOut)
	}
	var res struct {
		Results []struct {
			ID string `json:"id"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("search via %s: %v in %q", addr, err, out)
	}
	for _, r := range res.Results {
		if r.ID == id {
			return true
		}
	}
	return false
}
