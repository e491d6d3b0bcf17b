package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
	"github.com/memcluster/memcluster/tiering"
)

// Where cold segments live. By default a segment is the value of its side record (space 'k'), replicated by
// Raft with the rest of the shard. With Options.ColdStore (an object store: S3, or a directory every node
// shares) the coordinator uploads the segment before proposing, and the side record is a pointer holding what
// tier status needs without a fetch. Segment keys name their content (tiering.SegmentKey), so an upload
// retried after a conflict writes the same bytes under the same key.

// ColdStore is what the API needs of an external segment store (tiering.BlobStore satisfies it).
type ColdStore interface {
	Put(ctx context.Context, key string, data []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
	Delete(ctx context.Context, key string) error
	List(ctx context.Context, prefix string) ([]string, error)
}

// errColdStore: the external segment store failed (answered 502).
var errColdStore = errors.New("cold store")

// errNoColdStore: a pointer to an external segment reached a node configured without the store.
var errNoColdStore = errors.New("segment is in the external cold store, which this node has not configured (--cold-store)")

// coldPointer is the side record of a segment kept in the external store (format version 1).
type coldPointer struct {
	V        int         `json:"v"`
	Size     int         `json:"size"`
	Count    int         `json:"count"`
	Type     memory.Type `json:"type"`
	Checksum string      `json:"checksum"`
}

// coldRecord is a decoded side record of space 'k': the segment inline, or a pointer.
type coldRecord struct {
	inline []byte
	ptr    *coldPointer
}

// decodeCold reads a side record: a JSON string is an inline segment (base64), a JSON object a pointer.
func decodeCold(key string, v []byte) (coldRecord, error) {
	if len(v) > 0 && v[0] == '{' {
		var p coldPointer
		if err := json.Unmarshal(v, &p); err != nil || p.V != 1 {
			return coldRecord{}, fmt.Errorf("segment %s: unreadable pointer (format version %d): %v", key, p.V, err)
		}
		return coldRecord{ptr: &p}, nil
	}
	var seg []byte
	if err := json.Unmarshal(v, &seg); err != nil {
		return coldRecord{}, fmt.Errorf("segment %s: %w", key, err)
	}
	return coldRecord{inline: seg}, nil
}

// storeSegment decides the side record of a new segment: the segment itself, or — uploaded first — a pointer.
func (s *Server) storeSegment(ctx context.Context, t *userTxn, key string, seg []byte, typ memory.Type, count int) error {
	if s.opts.ColdStore == nil {
		return t.setSide(storage.SpaceCold, key, seg)
	}
	if err := s.opts.ColdStore.Put(ctx, key, seg); err != nil {
		return fmt.Errorf("%w: upload segment %s: %v", errColdStore, key, err)
	}
	return t.setSide(storage.SpaceCold, key, coldPointer{V: 1, Size: len(seg), Count: count, Type: typ,
		Checksum: tiering.SegmentID(seg)})
}

// segmentBytes returns a segment's bytes, fetching an external one.
func (s *Server) segmentBytes(ctx context.Context, key string, rec coldRecord) ([]byte, error) {
	if rec.ptr == nil {
		return rec.inline, nil
	}
	if s.opts.ColdStore == nil {
		return nil, fmt.Errorf("segment %s: %w", key, errNoColdStore)
	}
	seg, err := s.opts.ColdStore.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("%w: fetch segment %s: %v", errColdStore, key, err)
	}
	return seg, nil
}

// dropExternal deletes every external segment of user (after a forget; also the garbage of uploads whose
// transaction never committed). Nothing to do without an external store.
func (s *Server) dropExternal(ctx context.Context, shard uint32, user string) (int, error) {
	if s.opts.ColdStore == nil {
		return 0, nil
	}
	keys, err := s.opts.ColdStore.List(ctx, tiering.UserPrefix(shard, user))
	if err != nil {
		return 0, err
	}
	for i, k := range keys {
		if err := s.opts.ColdStore.Delete(ctx, k); err != nil {
			return i, err
		}
	}
	return len(keys), nil
}
