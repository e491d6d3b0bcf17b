package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/shardmap"
)

// verdict is what the checks found in one history.
type verdict struct {
	ops, violations, lost int
	replicasChecked       int // (id, replica) pairs compared
	divergent             int // ids whose replicas disagree
}

// finalReads reads every acknowledged id through every member in turn after healing, a few at a time; the
// reads join the history as client `client`. With -chaos.plant-anomaly one found read is reported as a 404.
func finalReads(t *testing.T, c *testCluster, h *history, client int) error {
	nodes := c.nodes()
	keys := h.acked()
	var plant atomic.Bool // one planted anomaly per test binary run
	plant.Store(*flagPlant)
	defer func() { *flagPlant = plant.Load() }()
	return parallel(len(keys), func(i int) error {
		k := keys[i]
		var e *event
		for attempt := 0; attempt < 20; attempt++ {
			nd := nodes[(i+attempt)%len(nodes)]
			e = &event{client: client, in: input{Kind: opGet, User: k.user, ID: k.id}, call: h.now()}
			m, err := nd.client.Get(context.Background(), k.user, k.id, false)
			e.ret = h.now()
			if err == nil {
				e.out = output{Found: true, Text: m.Text}
				break
			}
			if nf, _ := classify(err); nf {
				break
			}
			e.failed = true
			time.Sleep(250 * time.Millisecond)
		}
		if e.failed {
			return fmt.Errorf("final read of %s/%s never succeeded", k.user, k.id)
		}
		if e.out.Found && plant.CompareAndSwap(true, false) {
			e.out = output{}
			t.Logf("planted anomaly: final read of %s reported as 404", k.id)
		}
		h.record(e)
		return nil
	})
}

// parallel runs f(0..n-1) on a few workers — the checks' reads would take minutes one at a time — and returns
// the first error.
func parallel(n int, f func(i int) error) error {
	const workers = 6
	var next atomic.Int64
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// lostWrites counts acknowledged puts with no delete attempt at all that the final reads (client `final`) did
// not find. A delete that answered 404 counts as an attempt: it may have applied and misreported (that shows
// as a violation, not as lost).
func lostWrites(t *testing.T, h *history, final int) int {
	deleteTried := map[string]bool{}
	found := map[string]bool{}
	for _, e := range h.snapshot() {
		if e.in.Kind == opDelete && (!e.failed || e.out.Unknown) {
			deleteTried[e.in.ID] = true
		}
		if e.client == final {
			found[e.in.ID] = e.out.Found
		}
	}
	lost := 0
	for id, ok := range found {
		if !ok && !deleteTried[id] {
			lost++
			t.Logf("LOST: acknowledged put %s is not found after healing", id)
		}
	}
	return lost
}

// linearizable checks the history per id with porcupine and returns the operation and violation counts;
// tag names the visualizations written for violations.
func linearizable(t *testing.T, h *history, tag string) (ops, violations int) {
	var hist []porcupine.Operation
	for _, e := range h.snapshot() {
		if e.failed {
			continue
		}
		ret := int64(e.ret)
		if e.ret < 0 {
			ret = math.MaxInt64
		}
		hist = append(hist, porcupine.Operation{ClientId: e.client, Input: e.in, Output: e.out, Call: int64(e.call), Return: ret})
	}
	for _, part := range registerModel.Partition(hist) {
		r, info := porcupine.CheckOperationsVerbose(registerModel, part, 30*time.Second)
		switch r {
		case porcupine.Illegal:
			violations++
			in := part[0].Input.(input)
			path := filepath.Join(os.TempDir(), fmt.Sprintf("chaos-%s-%s.html", tag, in.ID))
			if err := porcupine.VisualizePath(registerModel, info, path); err == nil {
				t.Logf("VIOLATION on %s/%s; visualization in %s", in.User, in.ID, path)
			}
			for _, op := range part {
				ret := "pending"
				if op.Return != math.MaxInt64 {
					ret = time.Duration(op.Return).String()
				}
				t.Logf("  client %d [%v, %s] %s", op.ClientId, time.Duration(op.Call), ret,
					registerModel.DescribeOperation(op.Input, op.Output))
			}
		case porcupine.Unknown:
			t.Logf("check of %s timed out (counted as no violation)", part[0].Input.(input).ID)
		}
	}
	return len(hist), violations
}

// check runs every check on a healed cluster: final reads, lost writes, linearizability, replica agreement.
func check(t *testing.T, c *testCluster, h *history, final int, tag string) (verdict, error) {
	var v verdict
	t0 := time.Now()
	if err := finalReads(t, c, h, final); err != nil {
		return v, err
	}
	t1 := time.Now()
	v.lost = lostWrites(t, h, final)
	v.ops, v.violations = linearizable(t, h, tag)
	t2 := time.Now()
	var err error
	v.replicasChecked, v.divergent, err = replicasAgree(t, c, h)
	t.Logf("checks: final reads %.1fs, porcupine %.1fs, replica comparison %.1fs", t1.Sub(t0).Seconds(),
		t2.Sub(t1).Seconds(), time.Since(t2).Seconds())
	return v, err
}

// There is no digest endpoint; replicas are compared through what the internal API offers: each node's report
// of its replicas' applied index (GET /internal/v1/node), and a local read of one replica
// (GET /internal/v1/shards/{s}/memory?stale=true, never forwarded). Once writes stop, every placed replica of a
// shard must reach the same applied index and hold byte-identical JSON — embedding included — or the same 404
// for every id the history knows.

type replicaReport struct {
	Replicas []struct {
		Shard   uint32 `json:"shard"`
		Applied uint64 `json:"applied"`
		State   string `json:"state"`
		Halted  bool   `json:"halted"`
	} `json:"replicas"`
}

// settledStatus is n's cluster status once no split is under way (a split's child holds its users only once
// it has formed).
func settledStatus(n *node, d time.Duration) (apiv1.ClusterStatus, error) {
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		st, err := n.client.ClusterStatus(ctx)
		cancel()
		if err == nil && st.Split == nil && len(st.Shards) > 0 {
			return st, nil
		}
		if time.Now().After(deadline) {
			return st, fmt.Errorf("cluster status: a split still under way after %v (%v)", d, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// router routes users with the shard map a cluster status reports, as memnode does.
func router(st apiv1.ClusterStatus) (func(string) uint32, error) {
	ranges := make([]shardmap.Range, len(st.Shards))
	for _, s := range st.Shards {
		first, err1 := strconv.ParseUint(s.Range.First, 16, 64)
		last, err2 := strconv.ParseUint(s.Range.Last, 16, 64)
		if err := errors.Join(err1, err2); err != nil || s.ID >= len(ranges) {
			return nil, fmt.Errorf("shard %d's range %+v: %v", s.ID, s.Range, err)
		}
		ranges[s.ID] = shardmap.Range{Bucket: s.Range.Bucket, First: first, Last: last}
	}
	m, err := shardmap.New(uint32(st.Buckets), ranges)
	if err != nil {
		return nil, err
	}
	return m.Lookup, nil
}

// replicasAgree returns how many (id, replica) pairs it compared and how many ids differ between replicas.
func replicasAgree(t *testing.T, c *testCluster, h *history) (checked, divergent int, err error) {
	st, err := settledStatus(c.nodes()[0], 90*time.Second)
	if err != nil {
		return 0, 0, fmt.Errorf("replica check: %w", err)
	}
	route, err := router(st)
	if err != nil {
		return 0, 0, fmt.Errorf("replica check: %w", err)
	}
	addr := map[string]string{}
	for _, n := range st.Nodes {
		if n.State != "removed" { // removed for good: stopped, its address perhaps reused by a spare
			addr[n.ID] = n.HTTPAddr
		}
	}
	placed := make([][]string, len(st.Shards))
	for _, s := range st.Shards {
		placed[s.ID] = s.Replicas
	}
	if err := appliedConverge(placed, addr, 30*time.Second); err != nil {
		return 0, 0, err
	}
	hc := &http.Client{Timeout: 5 * time.Second}
	keys := h.acked()
	var mu sync.Mutex
	err = parallel(len(keys), func(i int) error {
		k := keys[i]
		s := route(k.user)
		var copies []string
		for _, id := range placed[s] {
			got, err := localRead(hc, addr[id], s, k)
			if err != nil {
				return err
			}
			copies = append(copies, got)
		}
		mu.Lock()
		defer mu.Unlock()
		checked += len(copies)
		for j := 1; j < len(copies); j++ {
			if copies[j] != copies[0] {
				divergent++
				t.Logf("DIVERGENT: %s/%s on shard %d: %s has %s, %s has %s", k.user, k.id, s,
					placed[s][0], copies[0], placed[s][j], copies[j])
				break
			}
		}
		return nil
	})
	return checked, divergent, err
}

// appliedConverge waits until every placed replica of every shard reports the same applied index.
func appliedConverge(placed [][]string, addr map[string]string, d time.Duration) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(d)
	for {
		applied := map[string]map[uint32]uint64{} // node -> shard -> applied
		var problems []string
		for id, a := range addr {
			var rep replicaReport
			if err := getJSON(hc, "http://"+a+"/internal/v1/node", &rep); err != nil {
				problems = append(problems, fmt.Sprintf("%s did not report its replicas: %v", id, err))
				continue
			}
			applied[id] = map[uint32]uint64{}
			for _, r := range rep.Replicas {
				applied[id][r.Shard] = r.Applied
				if r.State != "Follower" && r.State != "Leader" || r.Halted {
					problems = append(problems, fmt.Sprintf("%s's replica of shard %d is %s (halted %v)", id, r.Shard, r.State, r.Halted))
				}
			}
		}
		for s, reps := range placed {
			var idx []uint64
			for _, id := range reps {
				a, ok := applied[id][uint32(s)]
				if _, answered := applied[id]; answered && !ok {
					problems = append(problems, fmt.Sprintf("shard %d: %s reports no replica", s, id))
				}
				idx = append(idx, a)
			}
			if len(idx) > 0 && slices.Min(idx) != slices.Max(idx) {
				problems = append(problems, fmt.Sprintf("shard %d: replicas %v at applied indexes %v", s, reps, idx))
			}
		}
		if len(problems) == 0 {
			return nil
		}
		slices.Sort(problems)
		bad := strings.Join(problems, "; ")
		if time.Now().After(deadline) {
			return fmt.Errorf("replicas did not converge within %v: %s", d, bad)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// localRead returns one replica's copy of k as "200 <body>" or "404".
func localRead(hc *http.Client, addr string, shard uint32, k userID) (string, error) {
	q := url.Values{"user": {k.user}, "id": {k.id}, "stale": {"true"}}
	u := fmt.Sprintf("http://%s/internal/v1/shards/%d/memory?%s", addr, shard, q.Encode())
	resp, err := hc.Get(u)
	if err != nil {
		return "", fmt.Errorf("replica read %s: %w", u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	switch {
	case err != nil:
		return "", fmt.Errorf("replica read %s: %w", u, err)
	case resp.StatusCode == http.StatusNotFound:
		return "404", nil
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("replica read %s: %s: %s", u, resp.Status, b)
	}
	return "200 " + string(b), nil
}

func getJSON(hc *http.Client, u string, out any) error {
	resp, err := hc.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", u, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
