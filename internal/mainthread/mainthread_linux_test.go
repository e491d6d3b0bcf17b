package mainthread

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) { Main(m) }

// Do runs on the main thread, whose id is the process's, and tests run elsewhere.
func TestDoRunsOnTheMainThread(t *testing.T) {
	var tid int
	Do(func() { tid = unix.Gettid() })
	if tid != os.Getpid() {
		t.Fatalf("Do ran on thread %d, not the main thread %d", tid, os.Getpid())
	}
	if unix.Gettid() == os.Getpid() {
		t.Fatal("a test runs on the main thread")
	}
}
