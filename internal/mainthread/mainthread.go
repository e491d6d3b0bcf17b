package mainthread

import (
	"os"
	"runtime"
	"testing"
)

var calls = make(chan func())

// The main goroutine runs package initialisation on the main thread; locked here, it stays there, and no other
// goroutine runs on that thread while it lives. For test binaries only: a program importing this package would
// pin its main goroutine too.
func init() { runtime.LockOSThread() }

// Main runs m's tests in another goroutine, serves Do on the main thread meanwhile, and exits with their code.
// A test binary's TestMain calls it.
func Main(m *testing.M) {
	done := make(chan int, 1) // buffered: the tests can end even if the loop below has died
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

// Do runs f on the main thread and returns once it has; only under Main, and not from inside another Do. f
// must return: t.Fatal or runtime.Goexit there would end the main goroutine, so Do panics instead of waiting
// for a thread that will never serve again (report failures from f through values).
func Do(f func()) {
	done := make(chan bool, 1)
	calls <- func() {
		returned := false
		defer func() { done <- returned }()
		f()
		returned = true
	}
	if !<-done {
		panic("mainthread.Do: f did not return (t.Fatal, runtime.Goexit or a panic on the main thread)")
	}
}
