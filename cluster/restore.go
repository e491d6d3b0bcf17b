package cluster

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/backup"
	"github.com/memcluster/memcluster/internal/formats"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/shardmap"
	"github.com/memcluster/memcluster/storage"
)

// ColdSink is what a restore needs of the target's external cold segment store.
type ColdSink interface {
	Put(ctx context.Context, key string, data []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
	Delete(ctx context.Context, key string) error
}

// RestoreOptions configures Restore.
type RestoreOptions struct {
	// SpoolDir holds the verified parts between the two passes; default DataDir/restore-spool (removed after).
	SpoolDir string
	// Force restores into a cluster that holds memories (what it held is replaced, shard by shard, and a
	// failure then cannot put it back).
	Force bool
	// Cold is the target's external cold store; required when the backup holds or references segments of one.
	Cold ColdSink
	// Parallel is how many shards are installed at once (default 2): an install is mostly index rebuilding on
	// every replica, CPU that on a small machine starves raft's heartbeats when too many run at once.
	Parallel int
	// beforeShard, in tests, runs before each shard's install; an error fails that install.
	beforeShard func(shard uint32) error
}

// spooled is a backup read and checked to its end, its parts in files.
type spooled struct {
	m        backup.Manifest
	sum      backup.Summary
	shards   []restorePart
	cold     []coldPart
	coldRefs []backup.PartHeader
}

type coldPart struct {
	key  string
	path string
}

// Restore installs a backup into this cluster: first the whole stream is read, its checksums checked and its
// parts spooled to disk, and the target checked (same bucket count, fresh unless Force, a cold store if needed);
// only then are splits replayed to the backup's ranges and each shard installed through raft's user restore on
// its leader, which sends it to the followers by snapshot install. If a shard fails, the shards already
// restored are emptied again, so a fresh target is left as it was.
func (n *Node) Restore(ctx context.Context, r io.Reader, o RestoreOptions) (apiv1.BackupRestoreResponse, error) {
	start := time.Now()
	dir := o.SpoolDir
	if dir == "" {
		dir = filepath.Join(n.cfg.DataDir, "restore-spool")
	}
	if err := os.RemoveAll(dir); err != nil {
		return apiv1.BackupRestoreResponse{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return apiv1.BackupRestoreResponse{}, err
	}
	defer os.RemoveAll(dir)
	sp, err := spool(r, dir)
	if err != nil {
		return apiv1.BackupRestoreResponse{}, fmt.Errorf("%w: backup refused, nothing was written: %w", memory.ErrInvalid, err)
	}
	splits, err := n.checkTarget(ctx, sp, o)
	if err != nil {
		return apiv1.BackupRestoreResponse{}, err
	}
	if err := n.replaySplits(ctx, splits); err != nil {
		return apiv1.BackupRestoreResponse{}, err
	}
	if err := n.apply(ctx, sp, o, dir); err != nil {
		return apiv1.BackupRestoreResponse{}, err
	}
	n.log.Info("backup restored", "shards", len(sp.shards), "memories", sp.sum.Memories, "bytes", sp.sum.Bytes,
		"cold", sp.sum.ColdObjects, "seconds", time.Since(start).Seconds())
	return apiv1.BackupRestoreResponse{Shards: len(sp.shards), Memories: sp.sum.Memories, Bytes: sp.sum.Bytes,
		ColdObjects: sp.sum.ColdObjects, Seconds: time.Since(start).Seconds()}, nil
}

// spool reads the whole backup, writing each part to a file; any checksum or structure error fails it.
func spool(r io.Reader, dir string) (*spooled, error) {
	rd, err := backup.NewReader(r)
	if err != nil {
		return nil, err
	}
	sp := &spooled{m: rd.Manifest()}
	for i := 0; ; i++ {
		p, err := rd.Next()
		if err == io.EOF {
			sp.sum = rd.Summary()
			return sp, nil
		}
		if err != nil {
			return nil, err
		}
		if p.Header.Kind == backup.KindColdRef {
			sp.coldRefs = append(sp.coldRefs, p.Header)
			continue
		}
		path := filepath.Join(dir, fmt.Sprintf("part-%d", i))
		if err := spoolPart(p, path); err != nil {
			return nil, err
		}
		switch p.Header.Kind {
		case backup.KindShard:
			sp.shards = append(sp.shards, restorePart{shard: p.Header.Shard, path: path, size: p.End.Bytes, index: p.End.Index})
		case backup.KindCold:
			sp.cold = append(sp.cold, coldPart{key: p.Header.Key, path: path})
		default:
			return nil, fmt.Errorf("%w: unknown part kind %q", backup.ErrCorrupt, p.Header.Kind)
		}
	}
}

// recordsRestorable refuses a backup whose records (format got) a member of st's cluster does not read.
func recordsRestorable(got any, st MetaState) error {
	f := clusterRecords(st)
	for v := formats.RecordOldest; v <= int(f); v++ {
		if fmt.Sprint(got) == fmt.Sprint(v) {
			return nil
		}
	}
	return fmt.Errorf("%w: the backup holds memory records of format %v, which a member of this cluster does "+
		"not read (it reads %d): upgrade every node first", ErrRefused, got, f)
}

func spoolPart(p *backup.Part, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, p); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// checkTarget refuses a restore this cluster cannot take, before anything is written, and returns the splits
// that give the cluster the backup's ranges.
func (n *Node) checkTarget(ctx context.Context, sp *spooled, o RestoreOptions) ([]uint32, error) {
	if err := n.awaitFormed(ctx); err != nil {
		return nil, err
	}
	st, err := n.awaitNoSplit(ctx)
	if err != nil {
		return nil, err
	}
	m := sp.m
	switch {
	case m.Buckets != st.Buckets:
		return nil, fmt.Errorf("%w: the backup has %d buckets and this cluster %d: form the target with --shards %d",
			ErrRefused, m.Buckets, st.Buckets, m.Buckets)
	case len(sp.shards) != len(m.Shards):
		return nil, fmt.Errorf("%w: backup is corrupt: %d shard parts for %d shards", memory.ErrInvalid, len(sp.shards), len(m.Shards))
	case (len(sp.cold) > 0 || len(sp.coldRefs) > 0) && o.Cold == nil:
		return nil, fmt.Errorf("%w: the backup holds %d cold segments of an external store; start the target with --cold-store",
			ErrRefused, len(sp.cold)+len(sp.coldRefs))
	}
	for k, v := range backupFormats(st) {
		if !backupFormatReadable(k, m.Formats[k], v) {
			return nil, fmt.Errorf("%w: the backup's %s format is version %v, this build's %v", ErrRefused, k, m.Formats[k], v)
		}
	}
	if err := recordsRestorable(m.Formats["record"], st); err != nil {
		return nil, err
	}
	for i, p := range sp.shards {
		if p.shard != uint32(i) || m.Shards[i].ID != uint32(i) {
			return nil, fmt.Errorf("%w: backup is corrupt: shard parts out of order", memory.ErrInvalid)
		}
	}
	splits, err := planSplits(st.Ranges, rangesOf(m))
	if err != nil {
		return nil, err
	}
	if err := checkColdRefs(ctx, o.Cold, sp.coldRefs); err != nil {
		return nil, err
	}
	if o.Force {
		return splits, nil
	}
	return splits, n.checkFresh(ctx)
}

func rangesOf(m backup.Manifest) []shardmap.Range {
	out := make([]shardmap.Range, len(m.Shards))
	for i, s := range m.Shards {
		out[i] = s.Range
	}
	return out
}

// planSplits finds the splits (parents, in order) that turn the ranges have into want. Each new shard took the
// upper half of its parent's range, and a shard keeps its first position through later splits of its own (they
// give away upper halves), so shard c was born of the range whose upper half starts where want[c] starts: the
// layout replays in shard id order.
func planSplits(have, want []shardmap.Range) ([]uint32, error) {
	sim := slices.Clone(have)
	var parents []uint32
	for len(sim) < len(want) {
		c := len(sim)
		parent := -1
		for p := range sim {
			if lower, upper, err := sim[p].Split(); err == nil && upper.Bucket == want[c].Bucket && upper.First == want[c].First {
				parent, sim[p] = p, lower
				sim = append(sim, upper)
				break
			}
		}
		if parent < 0 {
			break
		}
		parents = append(parents, uint32(parent))
	}
	if !slices.Equal(sim, want) {
		return nil, fmt.Errorf("%w: the backup's %d shard ranges cannot be reached from this cluster's %d by splits", ErrRefused,
			len(want), len(have))
	}
	return parents, nil
}

func (n *Node) checkFresh(ctx context.Context) error {
	var held int64
	for _, s := range n.Status(ctx).Shards {
		if s.Memories < 0 {
			return fmt.Errorf("%w: shard %d did not report its memories; retry, or restore with --force", ErrRefused, s.ID)
		}
		held += s.Memories
	}
	if held > 0 {
		return fmt.Errorf("%w: the cluster holds %d memories; restore into a fresh cluster, or with --force to replace them",
			ErrRefused, held)
	}
	return nil
}

func checkColdRefs(ctx context.Context, cold ColdSink, refs []backup.PartHeader) error {
	for _, h := range refs {
		data, err := cold.Get(ctx, h.Key)
		if err != nil {
			return fmt.Errorf("%w: referenced cold segment %s: %v", ErrRefused, h.Key, err)
		}
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != h.SHA256 {
			return fmt.Errorf("%w: referenced cold segment %s differs from the backup's checksum", ErrRefused, h.Key)
		}
	}
	return nil
}

func (n *Node) replaySplits(ctx context.Context, parents []uint32) error {
	for _, p := range parents {
		if _, err := n.SplitShard(ctx, p, true); err != nil {
			return fmt.Errorf("replay the backup's split of shard %d: %w", p, err)
		}
	}
	return nil
}

// apply writes the cold segments, then the shards; on a failure it undoes what it wrote.
func (n *Node) apply(ctx context.Context, sp *spooled, o RestoreOptions, dir string) error {
	var put []string
	for _, c := range sp.cold {
		data, err := os.ReadFile(c.path)
		if err == nil {
			err = o.Cold.Put(ctx, c.key, data)
		}
		if err != nil {
			n.undo(ctx, o, put, nil, dir)
			return fmt.Errorf("restore cold segment %s: %w", c.key, err)
		}
		put = append(put, c.key)
	}
	attempted, err := n.restoreShards(ctx, sp.shards, o)
	if err != nil {
		n.undo(ctx, o, put, attempted, dir)
		return fmt.Errorf("%w (the shards restored were emptied again)", err)
	}
	return nil
}

// restoreShards installs the shards, o.Parallel at a time, stopping at the first failure; it returns the shards
// it started, for undo.
func (n *Node) restoreShards(ctx context.Context, parts []restorePart, o RestoreOptions) ([]restorePart, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, cmp.Or(o.Parallel, 2))
	var (
		mu      sync.Mutex
		first   error
		started []restorePart
		wg      sync.WaitGroup
	)
	failed := func() bool { mu.Lock(); defer mu.Unlock(); return first != nil }
	for _, p := range parts {
		sem <- struct{}{}
		if failed() {
			break
		}
		mu.Lock()
		started = append(started, p)
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			err := error(nil)
			if o.beforeShard != nil {
				err = o.beforeShard(p.shard)
			}
			if err == nil {
				err = n.restoreShard(ctx, p)
			}
			if err != nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("restore shard %d: %w", p.shard, err)
					cancel()
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return started, first
}

// undo empties the shards a failed restore touched and deletes the cold segments it wrote. With Force the
// target held data before, which is not brought back.
func (n *Node) undo(ctx context.Context, o RestoreOptions, cold []string, shards []restorePart, dir string) {
	ctx = context.WithoutCancel(ctx)
	for _, k := range cold {
		if err := o.Cold.Delete(ctx, k); err != nil {
			n.log.Warn("restore undo: cold segment stays", "key", k, "err", err)
		}
	}
	for _, p := range shards {
		empty := filepath.Join(dir, fmt.Sprintf("empty-%d", p.shard))
		err := writeEmpty(empty, p.index)
		if err == nil {
			p.path = empty
			p.size = fileSize(empty)
			rctx, cancel := context.WithTimeout(ctx, time.Minute)
			err = n.restoreShard(rctx, p)
			cancel()
		}
		if err != nil {
			n.log.Error("restore undo: shard not emptied", "shard", p.shard, "err", err)
		}
	}
}

func writeEmpty(path string, index uint64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return errors.Join(storage.WriteEmptySnapshot(f, index, 1), f.Close())
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}
