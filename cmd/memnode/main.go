// Command memnode runs one memcluster node: gossip, Raft groups for its shard replicas, and the HTTP API.
package main

import (
	"fmt"
	"os"
	"runtime"
)

// The main goroutine keeps the main thread, so no other goroutine runs there: the work memnode runs on lowered
// threads (full-text batches, Pebble's compactions) cannot lower the main thread, whose id is the process's
// (internal/threadprio), and would run at the process's priority whenever it started there.
func init() { runtime.LockOSThread() }

func main() {
	cmd := newRootCmd()
	if err := cmd.Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "memnode: %v\n", err)
		os.Exit(1)
	}
}
