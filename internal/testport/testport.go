package testport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// ErrNoPort is returned when no free port was found in the range.
var ErrNoPort = errors.New("testport: no free loopback port")

// A port taken by listening on :0 and closing the listener comes from the kernel's ephemeral range, the same
// range the kernel draws from for the local end of every outgoing connection. On a busy test machine another
// connection can take it in the moment before the process it was picked for binds it, and that process then
// fails to start (seen in CI: a memnode that never came up, and a cluster that never formed). Ports below the
// ephemeral range are never assigned that way, so they stay free until someone binds them on purpose (the
// approach of hashicorp's freeport). Each is checked free for TCP and UDP (gossip binds both) and handed out
// once per process; the start is random so that test processes running side by side rarely meet.

const (
	rangeLow  = 10000 // the lowest port handed out
	rangeSpan = 20000 // how many ports above rangeLow may be used, capped below the ephemeral range
)

var (
	mu    sync.Mutex
	taken = map[int]bool{}
	next  = -1
)

// Addr returns "127.0.0.1:PORT" for a port that is free on TCP and UDP, not in the ephemeral range, and not
// handed out before in this process.
func Addr() (string, error) {
	mu.Lock()
	defer mu.Unlock()
	lo, hi := bounds()
	span := hi - lo
	if next < 0 {
		next = rand.IntN(span)
	}
	for range span {
		port := lo + next
		next = (next + 1) % span
		if taken[port] || !free(port) {
			continue
		}
		taken[port] = true
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil
	}
	return "", fmt.Errorf("%w in [%d, %d)", ErrNoPort, lo, hi)
}

// MustAddr is Addr for tests: it fails t on error.
func MustAddr(t interface {
	Helper()
	Fatal(...any)
}) string {
	t.Helper()
	a, err := Addr()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// bounds is [rangeLow, min(rangeLow+rangeSpan, start of the ephemeral range)), or the same span above the
// ephemeral range when it starts too low to leave room below.
func bounds() (int, int) {
	eLo, eHi := ephemeral()
	if eLo-rangeLow >= 1000 {
		return rangeLow, min(rangeLow+rangeSpan, eLo)
	}
	return eHi + 1, min(eHi+1+rangeSpan, 65536)
}

// ephemeral reads the kernel's ephemeral port range (Linux), defaulting to IANA's 49152–65535.
func ephemeral() (int, int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 49152, 65535
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 49152, 65535
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || lo > hi {
		return 49152, 65535
	}
	return lo, hi
}

func free(port int) bool {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	defer l.Close()
	u, err := net.ListenPacket("udp", addr)
	if err != nil {
		return false
	}
	return u.Close() == nil
}
