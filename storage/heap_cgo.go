//go:build cgo

package storage

// pebbleOnGoHeap: with cgo Pebble allocates its block cache and memtables with calloc, outside the Go heap.
const pebbleOnGoHeap = false
