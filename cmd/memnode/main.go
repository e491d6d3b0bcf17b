// Command memnode runs one memcluster node: gossip, Raft groups for its shard replicas, and the HTTP API.
package main

import (
	"fmt"
	"os"
)

func main() {
	cmd := newRootCmd()
	if err := cmd.Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "memnode: %v\n", err)
		os.Exit(1)
	}
}
