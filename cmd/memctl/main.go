// Command memctl is the command-line client of memcluster.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
)

func main() {
	// Ctrl-C cancels the request in flight instead of leaving it to the timeout.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := newRootCmd(os.Stdin, os.Stdout, os.Stderr, os.Getenv).ExecuteContext(ctx)
	stop()
	if err != nil {
		// Exactly one line, whatever the error carries, so scripts can rely on it.
		fmt.Fprintf(os.Stderr, "memctl: %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		os.Exit(exitCode(err))
	}
}

// exitError asks main for a specific exit code (cluster status --check uses 2).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitCode(err error) int {
	if ee, ok := errors.AsType[*exitError](err); ok {
		return ee.code
	}
	return 1
}
