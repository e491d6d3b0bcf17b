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
func Factory(dataDir string, db *storage.DB, emb embed.Embedder, log *slog.Logger) cluster.IndexFactory {
	return func(shard uint32) (cluster.ShardIndex, error) {
		dir := filepath.Join(dataDir, "index", fmt.Sprintf("shard-%d", shard))
		ft, err := fulltext.Open(dir, fulltext.Options{NoSync: true})
		if errors.Is(err, fulltext.ErrOutdated) || errors.Is(err, fulltext.ErrDamaged) {
			log.Warn("full-text index unusable: rebuilding", "shard", shard, "err", err)
			if err = fulltext.Destroy(dir); err == nil {
				ft, err = fulltext.Open(dir, fulltext.Options{NoSync: true})
			}
		}
		if err != nil {
			return nil, err
		}
		idx, err := retrieval.OpenShardIndexWith(retrieval.ShardIndexOptions{Shard: shard, Records: db,
			Vectors: vector.New(emb.Dim()), Text: ft, Model: emb.Fingerprint(), Logger: log,
			Tail:       raftTail{db: db, shard: shard},
			Checkpoint: dir + ".vectors"})
		if err != nil {
			ft.Close()
			return nil, err
		}
		return idx, nil
	}
}
