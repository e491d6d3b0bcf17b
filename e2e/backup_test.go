package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
)

// startCluster starts three memnode processes with the given extra flags and waits until every node sees a
// healthy cluster.
func startCluster(t *testing.T, prefix string, extra ...string) []*proc {
	t.Helper()
	procs := []*proc{newProc(t, prefix+"1"), newProc(t, prefix+"2"), newProc(t, prefix+"3")}
	for _, p := range procs {
		p.start(append([]string{"--bootstrap-expect", "3", "--join", procs[0].gossip, "--shards", "4", "--replicas", "3"}, extra...)...)
	}
	ctx := context.Background()
	waitFor(t, 60*time.Second, "a healthy 3-node cluster "+prefix, func() bool {
		for _, p := range procs {
			st, err := p.client(t).ClusterStatus(ctx)
			if err != nil || !st.Healthy || len(st.Nodes) != 3 {
				return false
			}
		}
		return true
	})
	return procs
}

// seedModel gives ada facts, history and a cold segment (in the external store), and bo plain memories.
func seedModel(t *testing.T, p *proc) {
	t.Helper()
	c, ctx := p.client(t), context.Background()
	old := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	if _, err := c.PutBatch(ctx, []apiv1.PutRequest{
		{UserID: "ada", Text: "We paddled the kayak across Lake Tahoe at dawn.", OccurredAt: &old},
		{UserID: "ada", Text: "The kayak trip ended with a campfire on the shore of Lake Tahoe.", OccurredAt: &old}}); err != nil {
		t.Fatal(err)
	}
	if res, err := c.TierRun(ctx, "ada", "180d"); err != nil || res.Moved == 0 {
		t.Fatalf("tier run: %+v %v", res, err)
	}
	for _, s := range []string{"I work at Globex as an engineer.", "I live in Lisbon.", "My sister is called Ines."} {
		if _, err := c.Remember(ctx, "ada", s, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 12 {
		if _, err := c.Put(ctx, apiv1.PutRequest{UserID: "bo", Text: fmt.Sprintf("bo note %d about sailing, the harbour and knot %d", i, i%3)}); err != nil {
			t.Fatal(err)
		}
	}
}

// modelView is what the test compares between the clusters for one user.
func modelView(t *testing.T, p *proc, user string) string {
	t.Helper()
	c, ctx := p.client(t), context.Background()
	facts, err := c.Facts(ctx, user, true, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	hist, err := c.History(ctx, user, "")
	if err != nil {
		t.Fatal(err)
	}
	var view []string
	for _, f := range facts {
		view = append(view, "fact "+f.ID+" "+f.Statement)
	}
	for _, h := range hist {
		view = append(view, "history "+h.ID+" "+h.Op+" "+h.MemoryID)
	}
	for _, q := range []string{"kayak", "Globex engineer", "sailing harbour", "sister"} {
		zero := 0.0
		res, err := c.Search(ctx, apiv1.SearchRequest{UserID: user, Query: q, K: 5, MinScore: &zero})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range res.Results {
			ids = append(ids, r.ID)
		}
		slices.Sort(ids)
		view = append(view, "search "+q+": "+strings.Join(ids, ","))
	}
	return strings.Join(view, "\n")
}

// A 3-process cluster using an external cold store is backed up by memctl while 16 clients write, and takes
// scheduled backups meanwhile. The file verifies; a flipped byte, a truncation and a foreign file are refused
// by verify and by restore, leaving the fresh target empty; the file restores into a fresh 3-process cluster
// with its own cold store, which then holds every memory acknowledged before the backup began and answers
// facts, history, searches and escalation to cold segments as the source does. A second restore is refused.
func TestBackupRestoreProcesses(t *testing.T) {
	needProcesses(t)
	coldA, coldB, sched := t.TempDir(), t.TempDir(), t.TempDir()
	src := startCluster(t, "s", "--cold-store", "file://"+coldA, "--backup-every", "1s", "--backup-to", sched, "--backup-keep", "2")
	seedModel(t, src[0])
	ctx := context.Background()

	var mu sync.Mutex
	acked := map[string]string{} // id -> user
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := src[w%3].client(t)
			for i := 0; !stop.Load(); i++ {
				u := fmt.Sprintf("w%02d", (w+i)%24)
				if m, err := c.Put(ctx, apiv1.PutRequest{UserID: u, Text: fmt.Sprintf("client %d note %d", w, i)}); err == nil {
					mu.Lock()
					acked[m.ID] = u
					mu.Unlock()
				}
			}
		}()
	}
	waitFor(t, 30*time.Second, "writes before the backup", func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= 200 })
	mu.Lock()
	before := maps(acked)
	mu.Unlock()
	file := filepath.Join(t.TempDir(), "cluster.mcbak")
	out, errOut, code := memctl(t, src[1].http, "-o", "json", "backup", "create", "--out", file)
	stop.Store(true)
	wg.Wait()
	if code != 0 {
		t.Fatalf("backup create: %d %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var sum struct {
		Event    string `json:"event"`
		Memories int    `json:"memories"`
		Shards   int    `json:"shards"`
		Cold     int    `json:"cold_objects"`
	}
	segs := len(segFiles(t, coldA))
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil || sum.Shards != 4 || sum.Cold != segs ||
		segs == 0 || sum.Memories < len(before) || len(lines) != 4+segs+1 {
		t.Fatalf("backup summary %+v (%v) for %d acknowledged; output:\n%s", sum, err, len(before), out)
	}
	if out, _, code := memctl(t, src[0].http, "backup", "verify", file); code != 0 || !strings.HasPrefix(out, "ok ") {
		t.Fatalf("verify: %d %s", code, out)
	}

	dst := startCluster(t, "d", "--cold-store", "file://"+coldB)
	for name, f := range badCopies(t, file) {
		for _, args := range [][]string{{"backup", "verify", f}, {"backup", "restore", "--in", f}} {
			_, errOut, code := memctl(t, dst[0].http, args...)
			if code == 0 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Fatalf("%s %s: exit %d, stderr %q", args[1], name, code, errOut)
			}
		}
	}
	if n := clusterMemories(t, dst[0]); n != 0 || len(segFiles(t, coldB)) != 0 {
		t.Fatalf("refused restores changed the target: %d memories, segments %v", n, segFiles(t, coldB))
	}

	if out, errOut, code := memctl(t, dst[2].http, "backup", "restore", "--in", "file://"+file); code != 0 {
		t.Fatalf("restore: %d %s %s", code, out, errOut)
	}
	dc := dst[0].client(t)
	for id, u := range before {
		if _, err := dc.Get(ctx, u, id, false); err != nil {
			t.Fatalf("memory %s of %s acknowledged before the backup: %v", id, u, err)
		}
	}
	for _, u := range []string{"ada", "bo"} {
		a, b := modelView(t, src[0], u), modelView(t, dst[1], u)
		if u == "ada" && (!strings.Contains(a, "fact ") || !strings.Contains(a, "history ")) {
			t.Fatalf("ada has no facts or history to compare:\n%s", a)
		}
		if a != b {
			t.Fatalf("%s differs after the restore:\nsource:\n%s\ntarget:\n%s", u, a, b)
		}
	}
	if len(segFiles(t, coldB)) != segs {
		t.Fatalf("cold segments in the target's store: %v", segFiles(t, coldB))
	}
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	res, err := dc.Context(ctx, "ada", apiv1.ContextRequest{Query: "Tell me about the kayak trip on Lake Tahoe", Now: &now})
	if err != nil || !res.Escalated || !strings.Contains(res.Text, "campfire") {
		t.Fatalf("escalation to the restored cold segments: %+v %v", res, err)
	}
	if _, errOut, code := memctl(t, dst[0].http, "backup", "restore", "--in", file); code == 0 || !strings.Contains(errOut, "--force") {
		t.Fatalf("a second restore: %d %s", code, errOut)
	}
	checkScheduled(t, src, sched)
}

// checkScheduled waits for scheduled backups beyond the keep count and checks pruning, listing and metrics.
func checkScheduled(t *testing.T, src []*proc, dir string) {
	t.Helper()
	waitFor(t, 60*time.Second, "three scheduled backups", func() bool { return scheduledCount(t, src) >= 3 })
	// A backup committed a moment before its prune shows as a third file: wait for the prune.
	var lines []string
	waitFor(t, 30*time.Second, "backup list to show the two kept", func() bool {
		out, _, code := memctl(t, src[0].http, "backup", "list", "--from", dir)
		lines = strings.Split(strings.TrimSpace(out), "\n")
		return code == 0 && len(lines) == 1+2
	})
	if !strings.HasPrefix(lines[0], "NAME") || !strings.Contains(lines[1], "memcluster-") {
		t.Fatalf("backup list: %q", lines)
	}
	if f := strings.Fields(lines[2]); len(f) != 5 || f[3] != "4" {
		t.Fatalf("backup list row: %q", lines[2])
	}
}

// scheduledCount sums memcluster_backups_total{outcome="success"} over the nodes.
func scheduledCount(t *testing.T, procs []*proc) int {
	return int(metricSum(procs, `memcluster_backups_total{outcome="success"}`))
}

// metricSum sums one series (its name and labels as /metrics prints them) over the nodes that answer.
func metricSum(procs []*proc, series string) float64 {
	total := 0.0
	for _, p := range procs {
		resp, err := http.Get("http://" + p.http + "/metrics")
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, series+" "); ok {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					total += f
				}
			}
		}
	}
	return total
}

func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// badCopies writes a copy of file with one flipped byte, a truncated copy and a foreign file.
func badCopies(t *testing.T, file string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	flipped := slices.Clone(b)
	flipped[len(b)/3] ^= 0x01
	copies := map[string][]byte{"flipped": flipped, "truncated": b[:len(b)*2/3], "foreign": []byte("just some text, not a backup\n")}
	out := map[string]string{}
	for name, data := range copies {
		p := filepath.Join(dir, name+".mcbak")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out[name] = p
	}
	return out
}

func clusterMemories(t *testing.T, p *proc) int64 {
	t.Helper()
	sh, err := p.client(t).Shards(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, s := range sh.Shards {
		n += s.Memories
	}
	return n
}
