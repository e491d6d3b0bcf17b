package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
)

var at = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func TestPrintResults(t *testing.T) {
	long := strings.Repeat("é", 100) + "\nsecond line"
	rs := []apiv1.SearchResult{
		{Memory: memory.Memory{ID: "01A", Type: memory.Semantic, OccurredAt: at, Text: "tea\tplease"}, Score: 0.9, VectorScore: 0.8, TextScore: 1, Recency: 1},
		{Memory: memory.Memory{ID: "01B", Type: memory.Episodic, OccurredAt: at, Text: long}, Score: 0.5, VectorScore: 0.5, TextScore: 0.5, Recency: 1},
	}
	var b bytes.Buffer
	if err := printResults(&b, rs, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want header and 2 rows, got:\n%s", b.String())
	}
	if strings.Contains(lines[0], "RECENCY") {
		t.Errorf("recency column without decay: %q", lines[0])
	}
	if f := strings.Fields(lines[1]); f[0] != "1" || f[1] != "0.900" || f[2] != "0.800" || f[3] != "1.000" || f[4] != "01A" || f[5] != "semantic" || f[6] != "2025-01-02T03:04:05Z" || f[7] != "tea" {
		t.Errorf("row 1 = %q", lines[1])
	}
	if !strings.HasSuffix(lines[2], strings.Repeat("é", searchTextWidth-1)+"…") {
		t.Errorf("row 2 not cut to %d runes: %q", searchTextWidth, lines[2])
	}

	rs[1].Recency = 0.5
	b.Reset()
	_ = printResults(&b, rs, false)
	if !strings.Contains(b.String(), "RECENCY") {
		t.Errorf("no recency column with decay:\n%s", b.String())
	}

	b.Reset()
	_ = printResults(&b, nil, false)
	if b.String() != "no results\n" {
		t.Errorf("empty: %q", b.String())
	}
}

func TestPrintMemory(t *testing.T) {
	m := memory.Memory{ID: "01A", UserID: "u", Type: memory.Episodic, Text: "one\ntwo", OccurredAt: at, CreatedAt: at,
		Importance: 0.5, Tags: []string{"a", "b"}, Metadata: map[string]string{"z": "1", "a": "2"}}
	var b bytes.Buffer
	if err := printMemory(&b, m); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasSuffix(out, "\ntext:\n  one\n  two\n") {
		t.Errorf("multi-line text not last and indented:\n%s", out)
	}
	out = regexp.MustCompile(` {2,}`).ReplaceAllString(out, " ") // ignore column padding
	for _, want := range []string{"id: 01A\n", "agent_id: -\n", "tags: a, b\n", "metadata: a=2, z=1\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}

func TestPrintClusterStatus(t *testing.T) {
	st := apiv1.ClusterStatus{
		NodeID: "n1",
		Nodes:  []apiv1.NodeStatus{{ID: "n1", State: "alive", HTTPAddr: "h1"}, {ID: "n2", State: "dead"}},
		Shards: []apiv1.ShardStatus{{ID: 0, Leader: "n1", Replicas: []string{"n1", "n2"}, LiveReplicas: 1, Want: 2, AppliedIndex: 7}, {ID: 1}},
	}
	var b bytes.Buffer
	if err := printClusterStatus(&b, st); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasSuffix(out, "\nhealthy: false\n") {
		t.Errorf("last line:\n%s", out)
	}
	for _, want := range []string{"NODE", "n1*", "SHARD", "1/2", "n1,n2", "(none)"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}

func TestPrintJSONKeepsWireNames(t *testing.T) {
	var b bytes.Buffer
	resp := apiv1.SearchResponse{Results: []apiv1.SearchResult{{Memory: memory.Memory{ID: "01A", Text: "a < b & c"}, Score: 0.5}}}
	if err := printJSON(&b, resp); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "a < b & c") {
		t.Errorf("HTML-escaped: %s", b.String())
	}
	var got struct {
		Results []map[string]any `json:"results"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "text", "score", "vector_score", "text_score"} {
		if _, ok := got.Results[0][k]; !ok {
			t.Errorf("no %q in %s", k, b.String())
		}
	}
}
