package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/memcluster/memcluster/storage"
)

// diskStatsCollector exports what the node's Pebble DB writes (storage.DiskStats), read once a scrape so that
// the series agree with each other: the WAL, flush and compaction bytes per acknowledged put are its write
// amplification, and a growing level 0 means compactions fall behind.
type diskStatsCollector struct {
	db     *storage.DB
	series []diskSeries
}

type diskSeries struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(storage.DiskStats) float64
}

func registerDiskStats(reg prometheus.Registerer, db *storage.DB) {
	s := func(name, help string, kind prometheus.ValueType, value func(storage.DiskStats) float64) diskSeries {
		return diskSeries{prometheus.NewDesc(name, help, nil, nil), kind, value}
	}
	reg.MustRegister(&diskStatsCollector{db: db, series: []diskSeries{
		s("memcluster_storage_wal_bytes_total", "bytes written to the storage write-ahead log", prometheus.CounterValue,
			func(d storage.DiskStats) float64 { return float64(d.WALBytes) }),
		s("memcluster_storage_flush_bytes_total", "bytes of tables written by memtable flushes", prometheus.CounterValue,
			func(d storage.DiskStats) float64 { return float64(d.FlushBytes) }),
		s("memcluster_storage_compaction_bytes_total", "bytes of tables written by compactions that completed",
			prometheus.CounterValue, func(d storage.DiskStats) float64 { return float64(d.CompactionBytes) }),
		s("memcluster_storage_flushes_total", "memtable flushes begun, failed ones included", prometheus.CounterValue,
			func(d storage.DiskStats) float64 { return float64(d.Flushes) }),
		s("memcluster_storage_compactions_total",
			"compactions of every kind (moves and deletions write no tables), failed ones included",
			prometheus.CounterValue, func(d storage.DiskStats) float64 { return float64(d.Compactions) }),
		s("memcluster_storage_l0_tables", "tables in level 0 (flushes land there; compactions drain it)",
			prometheus.GaugeValue, func(d storage.DiskStats) float64 { return float64(d.L0Tables) }),
		s("memcluster_storage_l0_sublevels",
			"sublevels of level 0 (its read amplification: Pebble stops every write at 12, the node holds new writes from --overload-sublevels)",
			prometheus.GaugeValue, func(d storage.DiskStats) float64 { return float64(d.L0Sublevels) }),
		s("memcluster_storage_overloaded",
			"1 while the node holds new writes until its compactions catch up or its full-text backlog drains (refused with 503 overloaded after --overload-wait)",
			prometheus.GaugeValue, func(d storage.DiskStats) float64 {
				if d.Overloaded {
					return 1
				}
				return 0
			}),
		s("memcluster_storage_live_bytes", "bytes of live tables", prometheus.GaugeValue,
			func(d storage.DiskStats) float64 { return float64(d.LiveBytes) }),
		s("memcluster_storage_wal_syncs_total", "syncs of the storage write-ahead log", prometheus.CounterValue,
			func(d storage.DiskStats) float64 { return float64(d.WALSyncs) }),
		s("memcluster_storage_wal_syncs_held_total",
			"write-ahead log syncs after which the group commit held the next back for --group-commit-interval (a sync asked for meanwhile waits; none may be)",
			prometheus.CounterValue, func(d storage.DiskStats) float64 { return float64(d.WALSyncsHeld) }),
		s("memcluster_storage_synced_entries_total", "raft entries appended with a sync (shared by the syncs)",
			prometheus.CounterValue, func(d storage.DiskStats) float64 { return float64(d.SyncedEntries) }),
		s("memcluster_storage_write_stalls_total",
			"times writes were held until memtable flushes or level-0 compactions caught up (every shard of the "+
				"node waits)",
			prometheus.CounterValue, func(d storage.DiskStats) float64 { return float64(d.WriteStalls) }),
		s("memcluster_storage_write_stall_seconds_total", "seconds writes were held, a stall under way included",
			prometheus.CounterValue, func(d storage.DiskStats) float64 { return d.WriteStallTime }),
		s("memcluster_storage_compactions_lowered_total",
			"compactions run on a thread below the node's priority (--compaction-nice)",
			prometheus.CounterValue, func(d storage.DiskStats) float64 { return float64(d.LoweredCompactions) }),
	}})
}

// Describe implements prometheus.Collector.
func (c *diskStatsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, s := range c.series {
		ch <- s.desc
	}
}

// Collect implements prometheus.Collector.
func (c *diskStatsCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.db.DiskStats()
	for _, s := range c.series {
		ch <- prometheus.MustNewConstMetric(s.desc, s.kind, s.value(st))
	}
}
