package priotest

import (
	"os"
	"testing"

	"github.com/memcluster/memcluster/internal/threadprio"
)

// UnloweredNice is the calling thread's nice value, which a test that lowers a thread needs below 19: it skips
// the test otherwise, but fails it on CI (CI=true), where that is a broken runner and not a reason to pass.
func UnloweredNice(t testing.TB) int {
	t.Helper()
	base, err := threadprio.Nice()
	if err != nil {
		t.Fatal(err)
	}
	if base >= 19 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the process runs at nice %d already: its threads cannot be lowered", base)
		}
		t.Skipf("the process runs at nice %d already", base)
	}
	return base
}
