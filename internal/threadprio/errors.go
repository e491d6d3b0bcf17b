package threadprio

import "errors"

// ErrMainThread is Lower's refusal to lower the process's main thread.
var ErrMainThread = errors.New("lower a thread's priority: the main thread's id is the process's")
