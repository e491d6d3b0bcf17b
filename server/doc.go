// Package server is memnode's HTTP/JSON API: it validates requests, decides ids, clocks and embeddings, and
// hands each operation to the cluster, which runs it on the right shard.
package server
