package vector

import "testing"

// Two indexes sharing a Meter: it follows every way rows come and go (at least their bytes, at most the slabs'
// doubling over them), and is back at zero once both are closed, whatever comes after.
func TestMeterCountsRowsHeld(t *testing.T) {
	m := NewMeter()
	q := NewWithOptions(64, Options{Meter: m})              // quantized: 64×2 + 4 + 64 bytes a row
	e := NewWithOptions(64, Options{Meter: m, Exact: true}) // half rows only: 64×2 + 4 bytes a row
	vec := func(x float32) []float32 {
		v := make([]float32, 64)
		v[0] = x
		return v
	}
	want := func(step string) {
		t.Helper()
		rows := int64(q.Len())*196 + int64(e.Len())*132
		if got := m.Bytes(); got < rows || got > 2*rows+4*196 {
			t.Fatalf("%s: meter %d bytes for %d + %d rows (%d bytes)", step, got, q.Len(), e.Len(), rows)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(q.Upsert("u", "a", vec(1)))
	must(q.Upsert("u", "a", vec(2))) // a replacement adds no row
	must(e.Upsert("u", "a", vec(1)))
	want("upserts")
	must(q.UpsertMany("v", []string{"a", "b", "c"}, [][]float32{vec(1), vec(2), vec(3)}))
	want("upsert many")
	must(q.Load("w", []string{"a", "b"}, append(vec(1), vec(2)...)))
	must(q.Load("w", []string{"b", "c"}, append(vec(1), vec(2)...))) // into a namespace that holds rows
	want("loads")
	q.Delete("v", "b")
	q.Delete("v", "zz")
	want("deletes")
	q.DropNamespace("w")
	want("drop")
	if m.Bytes() == 0 {
		t.Fatal("meter at zero with rows held")
	}
	q.Close()
	e.Close()
	if m.Bytes() != 0 {
		t.Fatalf("after Close: meter %d bytes", m.Bytes())
	}
	// A search that raced the close still answers; a write after it is not metered.
	if hits := q.Search("u", vec(1), 1, nil); len(hits) != 1 {
		t.Fatalf("closed index answered %v", hits)
	}
	must(q.Upsert("x", "a", vec(1)))
	if m.Bytes() != 0 {
		t.Fatalf("a write after Close metered %d bytes", m.Bytes())
	}
}
