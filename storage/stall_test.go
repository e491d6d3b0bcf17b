package storage

import (
	"log/slog"
	"testing"
	"time"
)

// A stall counts once when it begins; its time counts while it lasts and stays counted after it ends.
func TestStallMeterCountsStallsAndTheirTime(t *testing.T) {
	var m stallMeter
	log := slog.New(slog.DiscardHandler)
	if n, d := m.read(); n != 0 || d != 0 {
		t.Fatalf("before any stall: %d, %v", n, d)
	}
	m.end() // an end without a begin (the listener installed mid-stall) counts nothing
	m.begin("memtable count limit reached", log)
	time.Sleep(2 * time.Millisecond)
	if n, d := m.read(); n != 1 || d < 2*time.Millisecond {
		t.Fatalf("during a stall: %d, %v", n, d)
	}
	m.end()
	n, d := m.read()
	time.Sleep(time.Millisecond)
	if n2, d2 := m.read(); n != 1 || n2 != 1 || d2 != d {
		t.Fatalf("after the stall: %d, %v then %d, %v", n, d, n2, d2)
	}
	m.begin("L0 file count limit exceeded", log)
	m.end()
	if n, _ := m.read(); n != 2 {
		t.Fatalf("two stalls counted as %d", n)
	}
}
