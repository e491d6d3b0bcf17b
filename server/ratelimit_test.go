package server

import (
	"testing"
	"time"
)

func TestTenantLimits(t *testing.T) {
	l := newTenantLimits(10, 3)
	now := time.Unix(1000, 0)
	for i := 0; i < 3; i++ {
		if ok, _ := l.allow("a", now); !ok {
			t.Fatalf("request %d within the burst refused", i)
		}
	}
	ok, wait := l.allow("a", now)
	if ok || wait <= 0 || wait > 100*time.Millisecond {
		t.Fatalf("over the burst: ok=%v wait=%v, want refused with a wait of at most 100ms", ok, wait)
	}
	if ok, _ := l.allow("b", now); !ok {
		t.Fatal("another tenant was throttled by a's traffic")
	}
	if ok, _ := l.allow("a", now.Add(150*time.Millisecond)); !ok {
		t.Fatal("a refused after its bucket refilled")
	}
	if ok, _ := newTenantLimits(0, 0).allow("x", now); !ok {
		t.Fatal("a zero rate must mean unlimited")
	}
}
