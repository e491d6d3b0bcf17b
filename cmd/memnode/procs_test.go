package main

import (
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"
)

func TestAutoProcsAddOnePerIndexingTurn(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	t.Setenv("GOMAXPROCS", "") // unset as far as the flag is concerned
	runtime.GOMAXPROCS(4)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	turns, err := applyProcs("auto", 0, log)
	if err != nil || turns != 2 || runtime.GOMAXPROCS(0) != 6 {
		t.Fatalf("auto on 4: turns %d, procs %d, %v; want 2 turns, 6 procs", turns, runtime.GOMAXPROCS(0), err)
	}
	runtime.GOMAXPROCS(1)
	if turns, _ := applyProcs("auto", 0, log); turns != 1 || runtime.GOMAXPROCS(0) != 2 {
		t.Fatalf("auto on 1: turns %d, procs %d; want 1 turn, 2 procs", turns, runtime.GOMAXPROCS(0))
	}
	runtime.GOMAXPROCS(4)
	t.Setenv("GOMAXPROCS", "4")
	if turns, _ := applyProcs("auto", 0, log); turns != 2 || runtime.GOMAXPROCS(0) != 4 {
		t.Fatalf("auto with GOMAXPROCS set: turns %d, procs %d; want the environment's 4", turns, runtime.GOMAXPROCS(0))
	}
	if turns, _ := applyProcs("runtime", 0, log); turns != 2 || runtime.GOMAXPROCS(0) != 4 {
		t.Fatalf("runtime: turns %d, procs %d; want 4 left alone", turns, runtime.GOMAXPROCS(0))
	}
	if turns, _ := applyProcs("3", 0, log); turns != 2 || runtime.GOMAXPROCS(0) != 3 {
		t.Fatalf("3: turns %d, procs %d; want 3 procs, turns from the 4 cores", turns, runtime.GOMAXPROCS(0))
	}
	t.Setenv("GOMAXPROCS", "")
	runtime.GOMAXPROCS(2)
	if turns, _ := applyProcs("auto", 3, log); turns != 3 || runtime.GOMAXPROCS(0) != 5 {
		t.Fatalf("auto, 3 turns on 2: turns %d, procs %d; want 3 turns, 5 procs", turns, runtime.GOMAXPROCS(0))
	}
	runtime.GOMAXPROCS(2)
	t.Setenv("GOMAXPROCS", "abc") // the runtime ignores it: so does auto
	if turns, _ := applyProcs("auto", 0, log); turns != 1 || runtime.GOMAXPROCS(0) != 3 {
		t.Fatalf("auto with GOMAXPROCS=abc on 2: turns %d, procs %d; want 1 turn, 3 procs", turns, runtime.GOMAXPROCS(0))
	}
}

func TestGOMAXPROCSFlagNamesABadValue(t *testing.T) {
	for _, bad := range []string{"0", "-2", "many", "2.5"} {
		cmd := newRootCmd()
		cmd.SetArgs([]string{"--gomaxprocs", bad, "--node-id", "n1"})
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), `--gomaxprocs "`+bad+`": want auto, runtime or a count`) {
			t.Errorf("--gomaxprocs %s: %v", bad, err)
		}
	}
}

func TestIndexTurnsFlagNamesABadValue(t *testing.T) {
	cmd := newRootCmd()
	cmd.SetArgs([]string{"--index-turns", "-1", "--node-id", "n1"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--index-turns -1: want 0 (half the cores) up to the") {
		t.Fatalf("--index-turns -1: %v", err)
	}
}
