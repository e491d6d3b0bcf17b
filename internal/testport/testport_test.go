package testport

import (
	"net"
	"strconv"
	"testing"
)

func TestAddrIsFreeOutsideTheEphemeralRangeAndNeverRepeats(t *testing.T) {
	eLo, eHi := ephemeral()
	seen := map[string]bool{}
	for range 200 {
		a := MustAddr(t)
		if seen[a] {
			t.Fatalf("%s handed out twice", a)
		}
		seen[a] = true
		_, p, _ := net.SplitHostPort(a)
		port, _ := strconv.Atoi(p)
		if port >= eLo && port <= eHi {
			t.Fatalf("%s is in the ephemeral range [%d, %d]", a, eLo, eHi)
		}
	}
	// A port held by a listener is skipped.
	a := MustAddr(t)
	l, err := net.Listen("tcp", a)
	if err != nil {
		t.Fatalf("listen on %s: %v", a, err)
	}
	defer l.Close()
}
