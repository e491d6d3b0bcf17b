package main

import (
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
)

// applyProcs sets how many goroutines Go runs at once (GOMAXPROCS) from --gomaxprocs and returns how many
// full-text batches the node builds at once (its Indexers' turns): --index-turns, or when that is 0 half the
// cores, at least one.
//
// auto, the default, gives the node one P more than its cores for each turn, unless GOMAXPROCS is in the
// environment. A batch built in a turn runs on a thread below the process's priority (retrieval.Indexers), and
// while the kernel leaves that thread waiting it keeps its P: with as many Ps as cores, a turn held one P the
// write path could not use. The extra P is the turn's, so the write path keeps every core and the kernel gives
// the batch only what it leaves. Under 64 writing clients on two cores that was 1.3× the puts/s
// (docs/benchmarks.md, "One P more than the cores").
//
// The cores are Go's own count, which follows a container's CPU limit; setting GOMAXPROCS here stops the
// runtime from following later changes of that limit (a restart reads it again).
func applyProcs(flag string, indexTurns int, log *slog.Logger) (turns int, err error) {
	cores := runtime.GOMAXPROCS(0)
	turns = max(cores/2, 1)
	if indexTurns > 0 {
		turns = indexTurns
	}
	switch flag {
	case "auto":
		if v := os.Getenv("GOMAXPROCS"); v != "" {
			log.Info("gomaxprocs from GOMAXPROCS", "procs", cores, "index_turns", turns)
			return turns, nil
		}
		runtime.GOMAXPROCS(cores + turns)
		log.Info("gomaxprocs: one more than the cores for each full-text indexing turn",
			"procs", cores+turns, "cores", cores, "index_turns", turns)
		return turns, nil
	case "runtime":
		log.Info("gomaxprocs: the runtime's", "procs", cores, "index_turns", turns)
		return turns, nil
	}
	n, err := parseProcs(flag)
	if err != nil {
		return 0, err
	}
	runtime.GOMAXPROCS(n)
	log.Info("gomaxprocs", "procs", n, "index_turns", turns)
	return turns, nil
}

// parseProcs reads --gomaxprocs as a count.
func parseProcs(flag string) (int, error) {
	n, err := strconv.Atoi(flag)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("--gomaxprocs %q: want auto, runtime or a count of at least 1", flag)
	}
	return n, nil
}
