package threadprio

import (
	"errors"
	"os"
	"runtime"
	"testing"

	"github.com/memcluster/memcluster/internal/mainthread"
)

// The main thread stays with mainthread: a goroutine of these tests never lands there, where Lower refuses.
func TestMain(m *testing.M) { mainthread.Main(m) }

// Lower refuses the main thread: ps and top would show the whole process at the lower priority.
func TestLowerRefusesTheMainThread(t *testing.T) {
	var err error
	var nice, base int
	base, _ = Nice()
	mainthread.Do(func() {
		_, err = Lower(1)
		nice, _ = Nice()
	})
	if !errors.Is(err, ErrMainThread) || nice != base {
		t.Fatalf("Lower on the main thread: %v, nice %d after (want ErrMainThread, %d)", err, nice, base)
	}
}

// Lower moves the calling thread only, by the steps asked and to 19 at most.
func TestLowerMovesTheCallingThreadOnly(t *testing.T) {
	base, err := Nice()
	if err != nil {
		t.Fatal(err)
	}
	if base >= 18 {
		// Nothing could be lowered: on CI that is a broken runner, not a reason to pass.
		if os.Getenv("CI") == "true" {
			t.Fatalf("the process runs at nice %d already: its threads cannot be lowered", base)
		}
		t.Skipf("the process runs at nice %d already", base)
	}
	type result struct{ lowered, after, capped int }
	done := make(chan result)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		var r result
		r.lowered, _ = Lower(1)
		r.after, _ = Nice()
		r.capped, _ = Lower(100)
		done <- r
	}()
	r := <-done
	if r.lowered != base+1 || r.after != base+1 {
		t.Fatalf("lowered by 1 from %d: Lower said %d, Nice %d", base, r.lowered, r.after)
	}
	if r.capped != 19 {
		t.Fatalf("lowered by 100: nice %d, want 19", r.capped)
	}
	if n, _ := Nice(); n != base {
		t.Fatalf("the test's thread at nice %d, want %d", n, base)
	}
}
