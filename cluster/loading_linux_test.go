package cluster

import (
	"errors"
	"os"
	"testing"

	"github.com/memcluster/memcluster/internal/threadprio"
	"github.com/memcluster/memcluster/retrieval"
)

// A restarted replica's indexes open retrieval.BuildNicer steps below the process, and what the open returns
// comes back unchanged.
func TestIndexesOpenAtALowerPriority(t *testing.T) {
	base, err := threadprio.Nice()
	if err != nil {
		t.Fatal(err)
	}
	if base >= 19 {
		if os.Getenv("CI") == "true" { // on CI that is a broken runner, not a reason to pass
			t.Fatalf("the process runs at nice %d already: its threads cannot be lowered", base)
		}
		t.Skipf("the process runs at nice %d already", base)
	}
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
