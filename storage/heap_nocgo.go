//go:build !cgo

package storage

// pebbleOnGoHeap: without cgo Pebble allocates its block cache and memtables with make, on the Go heap.
const pebbleOnGoHeap = true
