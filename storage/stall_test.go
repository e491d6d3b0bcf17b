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

// Stalls of two causes that overlap count as two, and their time once: from the first begin to the last end.
func TestStallMeterNestedStallsCountTheirTimeOnce(t *testing.T) {
	var m stallMeter
	log := slog.New(slog.DiscardHandler)
	m.begin("memtable count limit reached", log)
	m.begin("L0 file count limit exceeded", log)
	m.end()
	time.Sleep(2 * time.Millisecond)
	if _, d := m.read(); d < 2*time.Millisecond {
		t.Fatalf("one of two nested stalls ended and the time stopped: %v", d)
	}
	m.end()
	n, d := m.read()
	time.Sleep(2 * time.Millisecond)
	if n2, d2 := m.read(); n != 2 || n2 != 2 || d2 != d {
		t.Fatalf("after both ended: %d, %v then %d, %v; want 2 stalls and the time frozen", n, d, n2, d2)
	}
	m.end() // a stray end after both must not reopen or count anything
	if _, d3 := m.read(); d3 != d {
		t.Fatalf("a stray end moved the time: %v, then %v", d, d3)
	}
}
