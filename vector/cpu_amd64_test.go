//go:build amd64 && !purego

package vector

import (
	"os"
	"testing"
)

// needCPU passes over an assembly test on a CPU without the instructions it needs; CI's machines have them, so
// there a missing feature is a failure, not a skip.
func needCPU(t testing.TB, ok bool, what string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CPU lacks %s: the assembly kernels would go untested", what)
	}
	t.Skipf("CPU lacks %s", what)
}
