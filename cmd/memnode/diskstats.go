package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/memcluster/memcluster/storage"
)

// registerDiskStats exports what the node's Pebble DB writes (storage.DiskStats): the WAL, flush and compaction
// bytes per acknowledged put are its write amplification, and a growing level 0 means compactions fall behind.
func registerDiskStats(reg prometheus.Registerer, db *storage.DB) {
	counter := func(name, help string, f func(storage.DiskStats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return f(db.DiskStats()) })
	}
	gauge := func(name, help string, f func(storage.DiskStats) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help},
			func() float64 { return f(db.DiskStats()) })
	}
	reg.MustRegister(
		counter("memcluster_storage_wal_bytes_total", "bytes written to the storage write-ahead log",
			func(s storage.DiskStats) float64 { return float64(s.WALBytes) }),
		counter("memcluster_storage_flush_bytes_total", "bytes of tables written by memtable flushes",
			func(s storage.DiskStats) float64 { return float64(s.FlushBytes) }),
		counter("memcluster_storage_compaction_bytes_total", "bytes of tables written by compactions",
			func(s storage.DiskStats) float64 { return float64(s.CompactionBytes) }),
		counter("memcluster_storage_flushes_total", "memtable flushes",
			func(s storage.DiskStats) float64 { return float64(s.Flushes) }),
		counter("memcluster_storage_compactions_total", "compactions",
			func(s storage.DiskStats) float64 { return float64(s.Compactions) }),
		gauge("memcluster_storage_l0_tables", "tables in level 0 (flushes land there; compactions drain it)",
			func(s storage.DiskStats) float64 { return float64(s.L0Tables) }),
		gauge("memcluster_storage_live_bytes", "bytes of live tables",
			func(s storage.DiskStats) float64 { return float64(s.LiveBytes) }))
}
