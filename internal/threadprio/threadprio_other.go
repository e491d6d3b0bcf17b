//go:build !linux

package threadprio

import "errors"

var errUnsupported = errors.New("thread priorities: not supported on this platform")

// Lower is Linux's only: elsewhere the thread keeps its priority.
func Lower(int) (int, error) { return 0, errUnsupported }

// Nice is Linux's only.
func Nice() (int, error) { return 0, errUnsupported }
