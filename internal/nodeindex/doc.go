// Package nodeindex opens a node's per-shard search indexes (vectors and bleve full text) in its data directory, rebuilding a damaged full-text index from Pebble.
package nodeindex
