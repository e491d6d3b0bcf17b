package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/memcluster/memcluster/storage"
)

func TestGroupCommitFlagNamesABadValue(t *testing.T) {
	for _, bad := range []string{"-1ms", "51ms", "1h"} {
		cmd := newRootCmd()
		cmd.SetArgs([]string{"--group-commit-interval", bad, "--node-id", "n1"})
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), "--group-commit-interval") ||
			!strings.Contains(err.Error(), "want 0 (off) up to 50ms") {
			t.Errorf("--group-commit-interval %s: %v", bad, err)
		}
	}
}

func TestGroupCommitFlagZeroTurnsItOff(t *testing.T) {
	for in, want := range map[time.Duration]time.Duration{0: -1, time.Millisecond: time.Millisecond, 50 * time.Millisecond: 50 * time.Millisecond} {
		if got := (&config{groupCommit: in}).walMinSyncInterval(); got != want {
			t.Errorf("--group-commit-interval %v: storage interval %v, want %v", in, got, want)
		}
	}
}

func TestStorageCompressionFlagNamesABadValue(t *testing.T) {
	cmd := newRootCmd()
	cmd.SetArgs([]string{"--storage-compression", "lz4", "--node-id", "n1"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.Execute()
	if err == nil || !strings.Contains(err.Error(), `--storage-compression "lz4": want one of last-level, none, snappy`) {
		t.Errorf("--storage-compression lz4: %v", err)
	}
}

// The storage flags reach the options the node opens its DB with.
func TestStorageFlagsReachTheDB(t *testing.T) {
	for args, want := range map[string]storage.Options{
		"": {Compression: storage.DefaultCompression, WALMinSyncInterval: time.Millisecond,
			CompactionNicer: 10, OverloadSublevels: 10},
		"--storage-compression none --compaction-nice 0 --overload-sublevels 0": {Compression: "none",
			WALMinSyncInterval: time.Millisecond, OverloadSublevels: -1},
		"--storage-compression snappy --group-commit-interval 0 --compaction-nice 19": {Compression: "snappy",
			WALMinSyncInterval: -1, CompactionNicer: 19, OverloadSublevels: 10},
	} {
		var c config
		fs := pflag.NewFlagSet("memnode", pflag.ContinueOnError)
		c.register(fs)
		if err := fs.Parse(strings.Fields(args)); err != nil {
			t.Fatal(err)
		}
		got := c.storageOptions(nil)
		if got.Compression != want.Compression || got.WALMinSyncInterval != want.WALMinSyncInterval ||
			got.CompactionNicer != want.CompactionNicer || got.OverloadSublevels != want.OverloadSublevels {
			t.Errorf("%q: compression %q, sync interval %v, compaction nice %d, overload %d; want %q, %v, %d, %d",
				args, got.Compression, got.WALMinSyncInterval, got.CompactionNicer, got.OverloadSublevels,
				want.Compression, want.WALMinSyncInterval, want.CompactionNicer, want.OverloadSublevels)
		}
	}
}

// --compaction-nice and the overload flags refuse what they cannot mean, naming the flag and its range.
func TestStorageFlagsNameABadValue(t *testing.T) {
	for _, c := range []struct{ flag, value, want string }{
		{"--compaction-nice", "20", "--compaction-nice 20: want 0 to 19"},
		{"--compaction-nice", "-1", "--compaction-nice -1: want 0 to 19"},
		{"--overload-sublevels", "12", "--overload-sublevels 12: want 0 (never) to 11"},
		{"--overload-wait", "0s", "--overload-wait 0s: want more than 0 and at most 1m"},
		{"--overload-backlog", "-1", "--overload-backlog -1: want 0 (never) or a count of changes"},
	} {
		cmd := newRootCmd()
		cmd.SetArgs([]string{c.flag, c.value, "--node-id", "n1"})
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want %q", c.flag, c.value, err, c.want)
		}
	}
}
