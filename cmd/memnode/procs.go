package main

import (
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"

	"github.com/memcluster/memcluster/retrieval"
)

// applyProcs sets how many threads run Go code at once (GOMAXPROCS, Go's Ps) from --gomaxprocs and returns how many
// full-text batches the node builds at once (its Indexers' turns): --index-turns, or when that is 0
// retrieval.DefaultTurns (half the cores, at least one).
//
// auto, the default, gives the node one P more than its cores for each turn, unless GOMAXPROCS is in the
// environment. A batch built in a turn runs on a thread below the process's priority (retrieval.Indexers), and
// while the kernel leaves that thread waiting it keeps its P: with as many Ps as cores, a turn held one P the
// write path could not use. The extra P is the turn's, so the write path keeps every core and the kernel gives
// the batch only what it leaves. Under 64 writing clients, three nodes on two cores, that was 1.26× the puts/s in
// 15 s runs and 1.18× over 60 s (docs/benchmarks.md, "One P more than the cores, by default").
//
// The cores are Go's own count at start: the CPUs, or a container's CPU limit rounded up, at least 2. Setting
// GOMAXPROCS here stops the runtime from following later changes of that limit (a restart reads it again);
// --gomaxprocs runtime keeps the runtime's own count, and its updates.
func applyProcs(flag string, indexTurns int, log *slog.Logger) (turns int, err error) {
	cores := runtime.GOMAXPROCS(0)
	turns = retrieval.DefaultTurns(cores)
	if indexTurns > 0 {
		turns = indexTurns
	}
	switch flag {
	case "auto":
		if v := os.Getenv("GOMAXPROCS"); v != "" {
			if n, err := strconv.Atoi(v); err == nil && n > 0 { // what the runtime itself accepts
				log.Info("gomaxprocs from GOMAXPROCS", "procs", cores, "index_turns", turns)
				return turns, nil
			}
			log.Warn("GOMAXPROCS is not a count of at least 1: the runtime ignored it, and so does memnode", "GOMAXPROCS", v)
		}
		runtime.GOMAXPROCS(cores + turns)
		log.Info("gomaxprocs: one more than the cores for each full-text indexing turn; no longer follows the CPU limit",
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
