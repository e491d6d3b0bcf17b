package cluster

import (
	"context"
	"errors"
	"testing"
	"time"
)

// stuckFuture is a raft future whose entry never commits.
type stuckFuture struct{ done chan struct{} }

func (f stuckFuture) Error() error { <-f.done; return nil }

// A wait for a raft entry ends with its context, and for the node's own loops after raftChangeWait or at Stop.
func TestRaftWaitsEnd(t *testing.T) {
	f := stuckFuture{done: make(chan struct{})}
	defer close(f.done)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := futureError(ctx, f); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("futureError past its context: %v", err)
	}
	stop := make(chan struct{})
	close(stop)
	if err := futureErrorWithin(f, time.Hour, stop); !errors.Is(err, context.Canceled) {
		t.Fatalf("futureErrorWithin after stop: %v", err)
	}
	if err := futureErrorWithin(f, 20*time.Millisecond, make(chan struct{})); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("futureErrorWithin past its time: %v", err)
	}
}
