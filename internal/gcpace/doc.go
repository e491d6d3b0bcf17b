// Package gcpace sizes the Go garbage collector's headroom to the part of the heap that churns, leaving out the vectors at rest.
package gcpace
