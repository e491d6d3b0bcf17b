package e2e

import (
	"os"
	"testing"
)

// needProcesses lets `go test -short` on a laptop pass over the tests that build binaries and run processes;
// under CI=true they always run.
func needProcesses(t *testing.T) {
	t.Helper()
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("builds binaries and runs processes (-short)")
	}
}
