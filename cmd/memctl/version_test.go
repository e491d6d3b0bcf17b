package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/memcluster/memcluster/internal/buildinfo"
	"github.com/memcluster/memcluster/internal/formats"
)

func TestVersionNamesVersionCommitAndFormats(t *testing.T) {
	defer func(v, c string) { buildinfo.Version, buildinfo.Commit = v, c }(buildinfo.Version, buildinfo.Commit)
	buildinfo.Version, buildinfo.Commit = "v9.8.7", "0123abcd"

	out, _, err := run(t, nil, "", "version")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"memctl version: v9.8.7\n", "commit: 0123abcd", "go version: go",
		"storage_keys", "memory_record", "raft_command", "shard_snapshot", "meta_state         2 (reads 1-2)",
		"cold_segment", "fulltext_mapping"} {
		if !strings.Contains(out, want) {
			t.Errorf("memctl version output lacks %q:\n%s", want, out)
		}
	}

	out, _, err = run(t, nil, "", "-o", "json", "version")
	if err != nil {
		t.Fatal(err)
	}
	var in buildinfo.Info
	if err := json.Unmarshal([]byte(out), &in); err != nil {
		t.Fatalf("version -o json %q: %v", out, err)
	}
	if in.Version != "v9.8.7" || in.Commit != "0123abcd" || !strings.HasPrefix(in.Go, "go") {
		t.Fatalf("version -o json: %+v", in)
	}
	got := map[string]buildinfo.Format{}
	for _, f := range in.Formats {
		got[f.Name] = f
	}
	if f := got["meta_state"]; f.Writes != "2" || f.Reads != "1-2" || formats.Meta != 2 {
		t.Errorf("meta_state: %+v", f)
	}
	if f := got["raft_command"]; f.Writes != "2" || f.Reads != "1-2" {
		t.Errorf("raft_command: %+v", f)
	}
	if f := got["vector_checkpoint"]; f.Writes != "2" || f.Reads != "1-2" {
		t.Errorf("vector_checkpoint: %+v", f)
	}
	if f := got["dropped_marker"]; f.Writes != "2" || f.Reads != "1-2" {
		t.Errorf("dropped_marker: %+v", f)
	}
	if len(got) != 11 || got["backup_file"].Writes != "1" || got["export"].Writes != "1" {
		t.Errorf("%d formats, want 11 with backup_file, export, vector_checkpoint and dropped_marker: %+v", len(got), in.Formats)
	}

	// Unset at link time, the version is "dev".
	buildinfo.Version = ""
	out, _, _ = run(t, nil, "", "version")
	if !strings.HasPrefix(out, "memctl version: dev\n") {
		t.Errorf("without a link-time version: %q", out)
	}
}
