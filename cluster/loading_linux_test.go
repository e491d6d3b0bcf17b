package cluster

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/memcluster/memcluster/internal/mainthread"
	"github.com/memcluster/memcluster/internal/threadprio"
	"github.com/memcluster/memcluster/internal/threadprio/priotest"
	"github.com/memcluster/memcluster/retrieval"
)

// A restarted replica's indexes open retrieval.BuildNicer steps below the process, and what the open returns
// comes back unchanged.
func TestIndexesOpenAtALowerPriority(t *testing.T) {
	base := priotest.UnloweredNice(t)
	failed := errors.New("no such shard")
	var nice int
	idx, err := openLowered(func() (ShardIndex, error) {
		var nerr error
		nice, nerr = threadprio.Nice()
		return nil, errors.Join(failed, nerr)
	})
	if idx != nil || !errors.Is(err, failed) {
		t.Fatalf("openLowered returned %v, %v; want what the open returned", idx, err)
	}
	if want := min(base+retrieval.BuildNicer, 19); nice != want {
		t.Fatalf("the indexes opened at nice %d, want %d", nice, want)
	}
	if now, err := threadprio.Nice(); err != nil || now != base {
		t.Fatalf("the caller's thread is at nice %d (%v) after the open, want %d", now, err, base)
	}
}

// A goroutine that would open the indexes on the main thread, which is never lowered, hands the open to another
// thread, lowered; the main thread keeps its priority. (Under mainthread.Main no other goroutine lands there, so
// TestIndexesOpenAtALowerPriority no longer can either.)
func TestIndexesOpenOffTheMainThread(t *testing.T) {
	base := priotest.UnloweredNice(t)
	var tid, nice, mainNice int
	var nerr error
	mainthread.Do(func() {
		_ = openHereLowered(func() (ShardIndex, error) {
			tid = unix.Gettid()
			nice, nerr = threadprio.Nice()
			return nil, nil
		})
		mainNice, _ = threadprio.Nice()
	})
	if nerr != nil {
		t.Fatal(nerr)
	}
	if tid == os.Getpid() {
		t.Fatal("the indexes opened on the main thread")
	}
	if want := min(base+retrieval.BuildNicer, 19); nice != want {
		t.Fatalf("the indexes opened at nice %d, want %d", nice, want)
	}
	if mainNice != base {
		t.Fatalf("the main thread is at nice %d after the open, want %d", mainNice, base)
	}
}

func TestMain(m *testing.M) { mainthread.Main(m) }
