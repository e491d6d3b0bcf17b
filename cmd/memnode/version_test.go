package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/memcluster/memcluster/internal/buildinfo"
)

func TestVersionFlagPrintsVersionCommitAndFormats(t *testing.T) {
	defer func(v, c string) { buildinfo.Version, buildinfo.Commit = v, c }(buildinfo.Version, buildinfo.Commit)
	buildinfo.Version, buildinfo.Commit = "v1.2.3", "feedbeef"
	// MEMNODE_VERSION in the environment is not the flag: --version still prints and exits.
	t.Setenv("MEMNODE_VERSION", "not-a-bool")

	cmd := newRootCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--version"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"memnode version: v1.2.3\n", "commit: feedbeef\n", "go version: go", "data formats:",
		"storage_keys       1\n", "memory_record      3 (reads 1-3)\n", "raft_command       2 (reads 1-2)\n",
		"shard_snapshot     1\n",
		"meta_state         2 (reads 1-2)\n", "cold_segment       1\n", "fulltext_mapping   3\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("memnode --version lacks %q:\n%s", want, out.String())
		}
	}
}

func TestBindHostFlagFromEnvironment(t *testing.T) {
	cmd := newRootCmd()
	if err := cmd.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"MEMNODE_BIND_HOST": "0.0.0.0", "MEMNODE_VERSION": "x"}
	if err := applyEnv(cmd, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if got := cmd.Flags().Lookup("bind-host").Value.String(); got != "0.0.0.0" {
		t.Fatalf("MEMNODE_BIND_HOST: --bind-host is %q", got)
	}
}
