// Package e2e holds end-to-end tests that build memnode and memctl and run them as real processes.
package e2e
