// Package gcpace sizes the Go garbage collector's headroom to the part of the heap that churns, leaving out the vectors and storage buffers at rest.
package gcpace
