package sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/memcluster/memcluster/storage"
)

// Digest sums every key and value of the shard's keyspace (records, delete results, applied index): two replicas
// with equal digests hold byte-identical shard state.
type Digest struct {
	Sum  [sha256.Size]byte
	Keys int
}

func (d Digest) String() string { return fmt.Sprintf("%x/%d keys", d.Sum[:6], d.Keys) }

type kv struct{ k, v []byte }

func dumpShard(db *storage.DB) ([]kv, error) {
	lo, hi := storage.ShardRange(shardID)
	it, err := db.Pebble().NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []kv
	for ok := it.First(); ok; ok = it.Next() {
		out = append(out, kv{bytes.Clone(it.Key()), bytes.Clone(it.Value())})
	}
	return out, it.Error()
}

func digestOf(kvs []kv) Digest {
	h := sha256.New()
	for _, e := range kvs {
		// Length prefixes keep (k="ab", v="c") and (k="a", v="bc") apart.
		h.Write(binary.AppendUvarint(nil, uint64(len(e.k))))
		h.Write(e.k)
		h.Write(binary.AppendUvarint(nil, uint64(len(e.v))))
		h.Write(e.v)
	}
	d := Digest{Keys: len(kvs)}
	h.Sum(d.Sum[:0])
	return d
}

// firstDiff names the first key where two dumps differ, for the failure message.
func firstDiff(a, b []kv) string {
	for i := 0; i < min(len(a), len(b)); i++ {
		switch {
		case !bytes.Equal(a[i].k, b[i].k):
			return fmt.Sprintf("key %d: %q vs %q", i, a[i].k, b[i].k)
		case !bytes.Equal(a[i].v, b[i].v):
			return fmt.Sprintf("value of %q: %q vs %q", a[i].k, a[i].v, b[i].v)
		}
	}
	return fmt.Sprintf("%d keys vs %d", len(a), len(b))
}
