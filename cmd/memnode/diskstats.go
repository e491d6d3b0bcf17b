package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/memcluster/memcluster/storage"
)

// registerDiskStats exports what the node's Pebble DB writes (storage.DiskStats): the WAL, flush and compaction
// bytes per acknowledged put are its write amplification, and a growing level 0 means compactions fall behind.
func registerDiskStats(reg prometheus.Registerer, db *storage.DB) {
	series := []struct {
		name, help string
		counter    bool
		value      func(storage.DiskStats) float64
	}{
		{"memcluster_storage_wal_bytes_total", "bytes written to the storage write-ahead log", true,
			func(s storage.DiskStats) float64 { return float64(s.WALBytes) }},
		{"memcluster_storage_flush_bytes_total", "bytes of tables written by memtable flushes", true,
			func(s storage.DiskStats) float64 { return float64(s.FlushBytes) }},
		{"memcluster_storage_compaction_bytes_total", "bytes of tables written by compactions", true,
			func(s storage.DiskStats) float64 { return float64(s.CompactionBytes) }},
		{"memcluster_storage_flushes_total", "memtable flushes", true,
			func(s storage.DiskStats) float64 { return float64(s.Flushes) }},
		{"memcluster_storage_compactions_total", "compactions", true,
			func(s storage.DiskStats) float64 { return float64(s.Compactions) }},
		{"memcluster_storage_l0_tables", "tables in level 0 (flushes land there; compactions drain it)", false,
			func(s storage.DiskStats) float64 { return float64(s.L0Tables) }},
		{"memcluster_storage_live_bytes", "bytes of live tables", false,
			func(s storage.DiskStats) float64 { return float64(s.LiveBytes) }},
	}
	for _, m := range series {
		read := func() float64 { return m.value(db.DiskStats()) }
		if m.counter {
			reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: m.name, Help: m.help}, read))
		} else {
			reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: m.name, Help: m.help}, read))
		}
	}
}
