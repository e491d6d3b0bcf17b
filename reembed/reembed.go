package reembed

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

// Cluster is what the re-embedder needs of the node: the shards it leads and a way to commit to them.
type Cluster interface {
	LeaderShards() []uint32
	Propose(ctx context.Context, shard uint32, cmd []byte) (storage.ApplyResult, error)
}

// Records is what it needs of the node's DB.
type Records interface {
	ScanShard(shard uint32, fn func(memory.Memory) bool) error
}

// Embedder is what it needs of the embedding provider.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Fingerprint() string
}

// Options configures the job; zero fields take the defaults stated.
type Options struct {
	Interval time.Duration // between passes; default 30s
	Batch    int           // memories per embedding call and per proposal; default 64
	PerPass  int           // memories per shard per pass, so one shard cannot starve the others; default 4096
	Logger   *slog.Logger
	Registry prometheus.Registerer
}

func (o Options) withDefaults() Options {
	if o.Interval == 0 {
		o.Interval = 30 * time.Second
	}
	if o.Batch == 0 {
		o.Batch = 64
	}
	if o.PerPass == 0 {
		o.PerPass = 4096
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Job re-embeds, on the shards this node leads, every memory whose embedding came from another model, and
// commits the new vectors through raft (CmdSetEmbeddings) so every replica gets the same ones. Until then those
// memories are found by BM25 only: the vector index holds only vectors of the current model.
type Job struct {
	c    Cluster
	db   Records
	emb  Embedder
	opts Options
	done prometheus.Counter
}

// New returns a job; call Run.
func New(c Cluster, db Records, emb Embedder, opts Options) *Job {
	opts = opts.withDefaults()
	j := &Job{c: c, db: db, emb: emb, opts: opts, done: prometheus.NewCounter(prometheus.CounterOpts{
		Name: "memcluster_reembedded_total", Help: "Memories re-embedded after an embedding model change."})}
	if opts.Registry != nil {
		_ = opts.Registry.Register(j.done)
	}
	return j
}

// Run passes over the led shards every Interval until ctx ends.
func (j *Job) Run(ctx context.Context) {
	for {
		led := j.c.LeaderShards()
		for _, s := range led {
			if n, err := j.Pass(ctx, s); err != nil {
				j.opts.Logger.Warn("re-embed pass", "shard", s, "err", err)
			} else if n > 0 {
				j.opts.Logger.Info("re-embedded memories", "shard", s, "count", n, "model", j.emb.Fingerprint())
			}
		}
		wait := j.opts.Interval
		if len(led) == 0 {
			wait = min(wait, time.Second) // leaders are still being elected at start-up
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// StaleCounter is what a Cluster may also offer: how many memories of a shard have no vector of the current
// model, known from the indexes, so a pass skips a shard with none instead of reading its every record.
type StaleCounter interface {
	StaleEmbeddings(shard uint32) (n int, known bool)
}

// Pass re-embeds up to PerPass stale memories of one shard and returns how many it committed.
func (j *Job) Pass(ctx context.Context, shard uint32) (int, error) {
	if sc, ok := j.c.(StaleCounter); ok {
		if n, known := sc.StaleEmbeddings(shard); known && n == 0 {
			return 0, nil
		}
	}
	model := j.emb.Fingerprint()
	var stale []memory.Memory
	err := j.db.ScanShard(shard, func(m memory.Memory) bool {
		if m.EmbedModel != model {
			m.Embedding = nil
			stale = append(stale, m)
		}
		return len(stale) < j.opts.PerPass
	})
	if err != nil {
		return 0, err
	}
	done := 0
	for start := 0; start < len(stale); start += j.opts.Batch {
		batch := stale[start:min(start+j.opts.Batch, len(stale))]
		if err := j.commit(ctx, shard, model, batch); err != nil {
			return done, err
		}
		done += len(batch)
		j.done.Add(float64(len(batch)))
	}
	return done, nil
}

func (j *Job) commit(ctx context.Context, shard uint32, model string, batch []memory.Memory) error {
	texts := make([]string, len(batch))
	for i, m := range batch {
		texts[i] = m.Text
	}
	vecs, err := j.emb.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("embed %d texts: %w", len(texts), err)
	}
	p := storage.SetEmbeddingsPayload{Items: make([]storage.EmbeddingUpdate, len(batch))}
	for i, m := range batch {
		p.Items[i] = storage.EmbeddingUpdate{UserID: m.UserID, ID: m.ID, Model: model, Vector: vecs[i]}
	}
	cmd, err := storage.EncodeSetEmbeddings(p)
	if err != nil {
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err = j.c.Propose(pctx, shard, cmd)
	return err
}
