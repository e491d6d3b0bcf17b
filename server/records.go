package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/cluster"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
	"github.com/memcluster/memcluster/tiering"
)

// recordSpaces maps the public record kinds to the side spaces that hold them. The warm-restore counters
// (space 'j') are the node's bookkeeping, not the user's data, and are not listed.
var recordSpaces = map[string]byte{
	apiv1.RecordFact:    storage.SpaceFacts,
	apiv1.RecordHistory: storage.SpaceHistory,
	apiv1.RecordPattern: storage.SpacePatterns,
	apiv1.RecordSession: storage.SpaceSessions,
	apiv1.RecordSignal:  storage.SpaceSamples,
	apiv1.RecordCold:    storage.SpaceCold,
}

func recordSpace(kind string) (byte, error) {
	sp, ok := recordSpaces[kind]
	if !ok {
		return 0, memory.FieldError("kind", "unknown record kind %q (want fact, history, pattern, session, signal or cold)", kind)
	}
	return sp, nil
}

func (s *Server) handleRecords(w http.ResponseWriter, r *http.Request, c *decoded[noFields]) {
	kind := r.PathValue("kind")
	space, err := recordSpace(kind)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	limit, after, err := pageParams(r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	shard, ok := s.shard(w, r, c.user)
	if !ok {
		return
	}
	rd, err := s.c.ReadSideAfter(r.Context(), shard, space, c.user, after, limit, false)
	if err == nil && after != "" && len(rd.Items) > 0 && rd.Items[0].Key <= after {
		// A replica of an older build ignores the key to read after: paging would never end.
		err = fmt.Errorf("%w: the shard's replica does not page records (an older build); upgrade every node", cluster.ErrNotLeader)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	resp := apiv1.RecordsResponse{UserID: c.user, Kind: kind, Records: make([]apiv1.Record, 0, len(rd.Items))}
	for _, kv := range rd.Items {
		rec := apiv1.Record{Kind: kind, Key: kv.Key, Value: kv.Value}
		if kind == apiv1.RecordCold {
			if rec, err = s.coldRecord(r.Context(), kv); err != nil {
				s.failTxn(w, r, err)
				return
			}
		}
		resp.Records = append(resp.Records, rec)
	}
	if len(rd.Items) == limit {
		resp.NextCursor = encodeCursor(rd.Items[len(rd.Items)-1].Key)
	}
	writeJSON(w, http.StatusOK, resp)
}

// coldRecord resolves a segment record to the segment's bytes (fetching one kept in the external store), so
// an export carries the data, not a pointer into this cluster's object store, and decodes its items.
func (s *Server) coldRecord(ctx context.Context, kv storage.SideKV) (apiv1.Record, error) {
	rec, err := decodeCold(kv.Key, kv.Value)
	if err != nil {
		return apiv1.Record{}, err
	}
	seg, err := s.segmentBytes(ctx, kv.Key, rec)
	if err != nil {
		return apiv1.Record{}, err
	}
	_, items, err := tiering.Decode(seg)
	if err != nil {
		return apiv1.Record{}, fmt.Errorf("segment %s: %w", kv.Key, err)
	}
	v, err := json.Marshal(seg)
	return apiv1.Record{Kind: apiv1.RecordCold, Key: kv.Key, Value: v, Items: items}, err
}
