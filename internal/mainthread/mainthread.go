package mainthread

import (
	"os"
	"runtime"
	"testing"
)

var calls = make(chan func())

// The main goroutine runs package initialisation on the main thread; locked here, it stays there, and no other
// goroutine runs on that thread while it lives.
func init() { runtime.LockOSThread() }

// Main runs m's tests in another goroutine, serves Do on the main thread meanwhile, and exits with their code.
// A test binary's TestMain calls it.
func Main(m *testing.M) {
	done := make(chan int)
	go func() { done <- m.Run() }()
	for {
		select {
		case f := <-calls:
			f()
		case code := <-done:
			os.Exit(code)
		}
	}
}

// Do runs f on the main thread and returns once it has; only under Main.
func Do(f func()) {
	done := make(chan struct{})
	calls <- func() {
		defer close(done)
		f()
	}
	<-done
}
