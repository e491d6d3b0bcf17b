package main

import (
	"io"
	"strings"
	"testing"
)

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"1": 1, "512B": 512, "64KiB": 64 << 10, "2500MiB": 2500 << 20, "3GiB": 3 << 30, "1TiB": 1 << 40} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "3GB", "3 GiB", "-1GiB", "0", "1.5GiB", "9999999TiB"} {
		if _, err := parseBytes(in); err == nil {
			t.Errorf("parseBytes(%q) accepted", in)
		}
	}
}

func TestGCPacingFlagNamesABadValue(t *testing.T) {
	cmd := newRootCmd()
	cmd.SetArgs([]string{"--gc-pacing", "fast", "--node-id", "n1"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.Execute()
	if err == nil || !strings.Contains(err.Error(), `--gc-pacing "fast": want auto or off`) {
		t.Fatalf("--gc-pacing fast: %v", err)
	}
}

func TestRecordCacheFlag(t *testing.T) {
	for in, want := range map[string]int64{"32MiB": 32 << 20, "off": -1, "1GiB": 1 << 30} {
		if got, err := (&config{recordCache: in}).recordCacheBytes(); err != nil || got != want {
			t.Errorf("--record-cache %s = %d, %v; want %d", in, got, err, want)
		}
	}
	cmd := newRootCmd()
	cmd.SetArgs([]string{"--record-cache", "lots", "--node-id", "n1"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), `--record-cache "lots": want a size such as 32MiB, or off`) {
		t.Fatalf("--record-cache lots: %v", err)
	}
}
