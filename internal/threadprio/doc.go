// Package threadprio lowers the scheduling priority of the calling OS thread, for background work.
package threadprio
