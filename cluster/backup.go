package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/memcluster/memcluster/backup"
	"github.com/memcluster/memcluster/internal/formats"
)

// ColdSource is what a backup needs of the external cold segment store.
type ColdSource interface {
	List(ctx context.Context, prefix string) ([]string, error)
	Get(ctx context.Context, key string) ([]byte, error)
}

// BackupOptions configures Backup. The zero value backs up the shards only.
type BackupOptions struct {
	// Cold is the external cold segment store, if the cluster uses one; its segments go into the backup, or with
	// ColdRefs only their keys, sizes and checksums.
	Cold     ColdSource
	ColdRefs bool
	// Progress, if set, is called after each part.
	Progress func(backup.PartHeader, backup.PartEnd)
}

// Backup writes a backup of the whole cluster to w: the shard map and members as the meta group holds them now,
// then every shard streamed from its leader after a read barrier (so each holds every write acknowledged before
// its turn came), then the external cold segments. Shards are backed up one after the other; writes go on.
func (n *Node) Backup(ctx context.Context, w io.Writer, o BackupOptions) (backup.Summary, error) {
	if err := n.awaitFormed(ctx); err != nil {
		return backup.Summary{}, err
	}
	st, err := n.awaitNoSplit(ctx)
	if err != nil {
		return backup.Summary{}, err
	}
	bw, err := backup.NewWriter(w, n.manifest(st, o))
	if err != nil {
		return backup.Summary{}, err
	}
	for s := range st.Shards {
		if err := n.backupPart(ctx, bw, uint32(s), o.Progress); err != nil {
			return backup.Summary{}, err
		}
	}
	if o.Cold != nil {
		if err := backupCold(ctx, bw, o); err != nil {
			return backup.Summary{}, err
		}
	}
	return bw.Close()
}

func (n *Node) manifest(st MetaState, o BackupOptions) backup.Manifest {
	m := backup.Manifest{Created: time.Now().UTC(), Node: n.cfg.NodeID, Buckets: st.Buckets, MapVersion: st.MapVersion,
		Cold: backup.ColdNone, Formats: backupFormats(st)}
	for s, r := range st.Ranges {
		m.Shards = append(m.Shards, backup.Shard{ID: uint32(s), Range: r})
	}
	for _, id := range sortedKeys(st.Nodes) {
		info := st.Nodes[id]
		m.Members = append(m.Members, backup.Member{ID: id, HTTPAddr: info.HTTPAddr, RaftAddr: info.RaftAddr,
			Zone: info.Zone, State: st.States[id]})
	}
	switch {
	case o.Cold != nil && o.ColdRefs:
		m.Cold = backup.ColdReferenced
	case o.Cold != nil:
		m.Cold = backup.ColdIncluded
	}
	return m
}

func (n *Node) backupPart(ctx context.Context, bw *backup.Writer, shard uint32, progress func(backup.PartHeader, backup.PartEnd)) error {
	h := backup.PartHeader{Kind: backup.KindShard, Shard: shard}
	pw, err := bw.Part(h)
	if err != nil {
		return err
	}
	st, err := n.backupShard(ctx, shard, pw)
	if err != nil {
		return fmt.Errorf("back up shard %d: %w", shard, err)
	}
	pw.Records, pw.Memories, pw.Index = st.Records, st.Memories, st.Index
	end, err := pw.Close()
	if err != nil {
		return err
	}
	if progress != nil {
		progress(h, end)
	}
	return nil
}

// backupFormats are the format versions a backup's parts depend on; a restore needs the same ones, but for
// records, which this build reads from formats.RecordOldest on (backupFormatReadable). The records' is the newest
// format the cluster of st writes (records.go): an older build can restore a backup its cluster took before the
// upgrade was complete.
func backupFormats(st MetaState) map[string]any {
	return map[string]any{"keys": formats.Keys, "record": int(clusterRecords(st)), "snapshot": formats.Snapshot,
		"segment": formats.Segment}
}

// backupFormatReadable reports whether a backup whose part k has format version got can be restored by a build
// whose version of it is want.
func backupFormatReadable(k string, got, want any) bool {
	if k == "record" {
		for v := formats.RecordOldest; v <= formats.Record; v++ {
			if fmt.Sprint(got) == fmt.Sprint(v) {
				return true
			}
		}
		return false
	}
	return fmt.Sprint(got) == fmt.Sprint(want)
}

func backupCold(ctx context.Context, bw *backup.Writer, o BackupOptions) error {
	keys, err := o.Cold.List(ctx, "")
	if err != nil {
		return fmt.Errorf("list cold segments: %w", err)
	}
	sort.Strings(keys)
	for _, k := range keys {
		data, err := o.Cold.Get(ctx, k)
		if err != nil {
			return fmt.Errorf("read cold segment %s: %w", k, err)
		}
		h := backup.PartHeader{Kind: backup.KindCold, Key: k}
		if o.ColdRefs {
			sum := sha256.Sum256(data)
			h = backup.PartHeader{Kind: backup.KindColdRef, Key: k, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
			data = nil
		}
		pw, err := bw.Part(h)
		if err != nil {
			return err
		}
		if _, err := pw.Write(data); err != nil {
			return err
		}
		end, err := pw.Close()
		if err != nil {
			return err
		}
		if o.Progress != nil {
			o.Progress(h, end)
		}
	}
	return nil
}
