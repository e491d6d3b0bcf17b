package main

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/memcluster/memcluster/storage"
)

// Every storage series is exported, the counters as counters, from one read of the DB's stats.
func TestDiskStatsExported(t *testing.T) {
	db, err := storage.Open("db", storage.Options{FS: vfs.NewMem(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SyncedWrites().Add(1)
	if err := db.Pebble().Set([]byte("k"), make([]byte, 1024), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	registerDiskStats(reg, db)
	got, families := gathered(t, reg)
	if len(got) != 15 {
		t.Errorf("%d series exported, want 15: %v", len(got), got)
	}
	// The pacer counts a sync after its waiters are released, so the count may trail the write above; Open's
	// own synced write (the key format) has been counted by then.
	if got["memcluster_storage_wal_syncs_total"] < 1 || got["memcluster_storage_synced_entries_total"] != 1 {
		t.Errorf("a synced write counted as %v syncs and %v entries", got["memcluster_storage_wal_syncs_total"],
			got["memcluster_storage_synced_entries_total"])
	}
	if got["memcluster_storage_wal_bytes_total"] < 1024 {
		t.Errorf("WAL bytes %v after a 1 KiB write", got["memcluster_storage_wal_bytes_total"])
	}
	for _, f := range families {
		if name := f.GetName(); strings.HasSuffix(name, "_total") && f.GetType().String() != "COUNTER" {
			t.Errorf("%s is a %s", name, f.GetType())
		}
	}
}

// gathered is every series reg exports, by name, or by name/label value when the series has a label, counters
// and gauges alike; and the families, for their types.
func gathered(t *testing.T, reg *prometheus.Registry) (map[string]float64, []*dto.MetricFamily) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			key := f.GetName()
			if l := m.GetLabel(); len(l) > 0 {
				key += "/" + l[0].GetValue()
			}
			v := m.GetGauge().GetValue()
			if c := m.GetCounter(); c != nil {
				v = c.GetValue()
			}
			got[key] = v
		}
	}
	return got, families
}
