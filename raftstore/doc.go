// Package raftstore implements hashicorp/raft log and stable storage on a Pebble DB shared by all the shards of a node.
package raftstore
