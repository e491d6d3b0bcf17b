package storage

// DiskStats is what the DB has written since it opened: the bytes behind a put's write amplification (each
// put is written to the WAL as a raft entry and as a record, then again by flushes and by every compaction
// that rewrites it) and the state of level 0, where flushes land.
type DiskStats struct {
	WALBytes        uint64  // bytes written to the write-ahead log
	FlushBytes      uint64  // bytes of tables written by flushes
	CompactionBytes uint64  // bytes of tables written by compactions that completed
	Flushes         int64   // flushes begun, failed ones included
	Compactions     int64   // compactions of every kind (moves and deletions write no tables), failed ones included
	L0Tables        int64   // tables in level 0 now
	L0Sublevels     int64   // sublevels of level 0 now: Pebble's read amplification there, which stops writes at 12
	Overloaded      bool    // new writes are held until compactions catch up, or a backlog drains (WaitWritable, SetBacklog)
	LiveBytes       int64   // bytes of live tables now
	WALSyncs        uint64  // syncs of the write-ahead log
	WALSyncsHeld    uint64  // syncs after which the group commit held the next back (whether or not one was asked for)
	SyncedEntries   uint64  // what the synced writes counted in SyncedWrites carried (raft entries)
	WriteStalls     int64   // times Pebble held writes until flushes or compactions caught up
	WriteStallTime  float64 // seconds writes were held, a stall under way included
	// LoweredCompactions counts the compactions that ran on a lowered thread (Options.CompactionNicer); with
	// Compactions, it shows those that could not be lowered (moves and deletions are never).
	LoweredCompactions int64
}

// DiskStats reads the DB's write counters; once the DB is closed, their values at Close.
func (d *DB) DiskStats() DiskStats {
	d.closeMu.RLock()
	defer d.closeMu.RUnlock()
	if d.closed {
		return d.final
	}
	return d.diskStats()
}

// diskStats reads them from the open DB; the caller holds closeMu.
func (d *DB) diskStats() DiskStats {
	m := d.db.Metrics()
	s := DiskStats{WALBytes: m.WAL.BytesWritten, Flushes: m.Flush.Count, Compactions: m.Compact.Count,
		L0Tables: m.Levels[0].TablesCount, L0Sublevels: int64(m.Levels[0].Sublevels),
		WALSyncs: d.pacer.syncs.Load(), WALSyncsHeld: d.pacer.held.Load(), SyncedEntries: d.pacer.entries.Load(), LoweredCompactions: d.lowered.Load()}
	if p := d.health.pressure; p != nil {
		err, _ := p.state(true)
		s.Overloaded = err != nil
	}
	n, t := d.health.stalls.read()
	s.WriteStalls, s.WriteStallTime = n, t.Seconds()
	// Summed here, not with Metrics.Total, which counts the WAL's bytes as flushed too.
	for _, l := range m.Levels {
		s.FlushBytes += l.TableBytesFlushed
		s.CompactionBytes += l.TableBytesCompacted
		s.LiveBytes += l.TablesSize
	}
	return s
}
