package main

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/memcluster/memcluster/apiv1"
)

// flagsFor binds a command's options to a fresh flag set and parses args, so
// the request the command would send can be inspected without a server.
func flagsFor(t *testing.T, addFlags func(*pflag.FlagSet), args ...string) (*pflag.FlagSet, []string) {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	addFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs, fs.Args()
}

func TestPutRequest(t *testing.T) {
	o := &putOptions{}
	fs, args := flagsFor(t, o.addFlags, "--user", "alice", "--agent", "a1", "--run", "r1", "--type", "semantic",
		"--time", "2025-03-04T05:06:07+01:00", "--tag", "x,y", "--tag", "z", "--entity", "Bob",
		"--importance", "0", "--meta", "k=v=w", "--meta", "e=", "likes", " tea")
	req, err := o.request(fs, args, strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 3, 4, 4, 6, 7, 0, time.UTC)
	imp := 0.0
	want := apiv1.PutRequest{
		UserID: "alice", AgentID: "a1", RunID: "r1", Type: "semantic", Text: "likes  tea",
		OccurredAt: &at, Tags: []string{"x,y", "z"}, Entities: []string{"Bob"}, Importance: &imp,
		Metadata: map[string]string{"k": "v=w", "e": ""},
	}
	if !req.OccurredAt.Equal(at) {
		t.Errorf("time %v", req.OccurredAt)
	}
	req.OccurredAt = &at
	if !reflect.DeepEqual(req, want) {
		t.Errorf("got  %+v\nwant %+v", req, want)
	}

	// Unset optional flags are not sent, so server defaults apply.
	o = &putOptions{}
	fs, args = flagsFor(t, o.addFlags, "--user", "u", "-")
	req, err = o.request(fs, args, strings.NewReader("line 1\nline 2\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	if req.Importance != nil || req.OccurredAt != nil || req.Metadata != nil || req.Type != "" {
		t.Errorf("defaults sent: %+v", req)
	}
	if req.Text != "line 1\nline 2" {
		t.Errorf("stdin text %q", req.Text)
	}
}

func TestSearchRequest(t *testing.T) {
	o := &searchOptions{}
	fs, args := flagsFor(t, o.addFlags, "--user", "u", "--k", "3", "--type", "semantic", "--type", "episodic",
		"--tag", "t", "--since", "2025-01-01T00:00:00Z", "--until", "2025-02-01T00:00:00Z",
		"--min-score", "0", "--recency-half-life", "720h", "--stale", "--now", "2025-02-08T09:00:00Z", "what", "tea")
	req, err := o.request(fs, args, strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	if req.Query != "what tea" || req.K != 3 || len(req.Types) != 2 || req.From == nil || req.To == nil ||
		req.RecencyHalfLife != "720h" || !req.Stale || req.MinScore == nil || *req.MinScore != 0 || req.Now == nil ||
		req.Now.Day() != 8 {
		t.Errorf("got %+v", req)
	}

	o = &searchOptions{}
	fs, args = flagsFor(t, o.addFlags, "--user", "u", "q")
	req, err = o.request(fs, args, strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	if req.MinScore != nil || req.K != 0 || req.From != nil || req.RecencyHalfLife != "" || req.Now != nil {
		t.Errorf("defaults sent: %+v", req)
	}
}
