package nodeindex

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/memcluster/memcluster/cluster"
	"github.com/memcluster/memcluster/embed"
	"github.com/memcluster/memcluster/fulltext"
	"github.com/memcluster/memcluster/retrieval"
	"github.com/memcluster/memcluster/storage"
	"github.com/memcluster/memcluster/vector"
)

// Factory opens shard indexes under dataDir/index/shard-N, with the vectors' checkpoint beside them in
// shard-N.vectors. An outdated or damaged full-text index is derived
// state: it is destroyed and rebuilt from the shard's records in db. One that a crash left behind its records
// is re-fed from the raft log entries it missed when the log still vouches for them (tail.go), else in full.
//
// The vectors of every shard count in meters.Vectors, by which the node paces its collector, and the searches of
// every shard share it, so that one splits its scan only while no other scans; the full-text caches of every
// shard count in meters.Text (nil: each index alone, counted nowhere).
//
// The node's indexes settle one at a time (fulltext.Settlers): after a burst of writes every shard goes idle
// at once, and each settle merges a whole index. Its followers build their full-text batches in turns of
// indexers (nil: retrieval.DefaultIndexers, half the cores), so that their bursts leave the write path a share
// of the CPU.
func Factory(dataDir string, db *storage.DB, emb embed.Embedder, meters Meters, indexers *retrieval.Indexers,
	log *slog.Logger) cluster.IndexFactory {
	opts := fulltext.Options{NoSync: true, Settlers: fulltext.NewSettlers(1), Meter: meters.Text}
	if indexers == nil {
		indexers = retrieval.DefaultIndexers()
	}
	return func(shard uint32) (cluster.ShardIndex, error) {
		dir := filepath.Join(dataDir, "index", fmt.Sprintf("shard-%d", shard))
		ft, err := fulltext.Open(dir, opts)
		if errors.Is(err, fulltext.ErrOutdated) || errors.Is(err, fulltext.ErrDamaged) {
			log.Warn("full-text index unusable: rebuilding", "shard", shard, "err", err)
			if err = fulltext.Destroy(dir); err == nil {
				ft, err = fulltext.Open(dir, opts)
			}
		}
		if err != nil {
			return nil, err
		}
		vec := vector.NewWithOptions(emb.Dim(), vector.Options{Meter: meters.Vectors})
		idx, err := retrieval.OpenShardIndexWith(retrieval.ShardIndexOptions{Shard: shard, Records: db,
			Vectors: vec, Text: ft, Model: emb.Fingerprint(), Logger: log,
			Tail:       raftTail{db: db, shard: shard},
			Checkpoint: dir + ".vectors", Indexers: indexers})
		if err != nil {
			vec.Close()
			ft.Close()
			return nil, err
		}
		return idx, nil
	}
}

// Meters are what the shard indexes of a node report to; a nil one leaves each index its own.
type Meters struct {
	Vectors *vector.Meter   // the vector slabs' bytes, and the searches scanning large users
	Text    *fulltext.Meter // the full-text caches: users' postings and decoded lists
}
