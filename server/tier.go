package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/consolidation"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/retrieval"
	"github.com/memcluster/memcluster/storage"
	"github.com/memcluster/memcluster/tiering"
)

// Cold segments live in the user's side space 'k' of the shard keyspace: replicated by Raft like everything
// else (so they survive the loss of any node), carried by snapshots, removed by forget. The object-store
// backends of package tiering are the option for deployments that want cold bytes off the nodes.

// tierMargin is the part of a request's deadline a tier run leaves unused, so that it can answer with what it
// did instead of timing out halfway through a transaction.
const tierMargin = 5 * time.Second

// maxGroupsPerTxn bounds one tiering transaction (each segment is ~50-150 KB per 500 items).
const maxGroupsPerTxn = 16

func (s *Server) handleTierRun(w http.ResponseWriter, r *http.Request, c *decoded[apiv1.TierRunRequest]) {
	req := c.body
	if req.UserID != "" {
		if err := s.opts.Limits.ValidateID("user_id", req.UserID, true); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	opts := tiering.Options{}
	if req.OlderThan != "" {
		d, err := parseAge(req.OlderThan)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		opts.OlderThan = d
	}
	pol, err := tiering.NewPolicy(opts)
	if err != nil {
		s.fail(w, r, memory.FieldError("older_than", "%v", err))
		return
	}
	if req.UserID == "" {
		s.tierRunAll(w, r, pol)
		return
	}
	res := apiv1.TierRunResponse{UserID: req.UserID}
	res.Moved, res.Segments, res.Partial, err = s.tierUser(r.Context(), req.UserID, pol)
	if err != nil {
		s.failTxn(w, r, err)
		return
	}
	s.log.Info("tiered", "user_id", req.UserID, "moved", res.Moved, "segments", len(res.Segments))
	writeJSON(w, http.StatusOK, res)
}

// tierUser tiers what the policy selects of one user's hot memories, one bounded transaction at a time. It
// starts no transaction within tierMargin of ctx's deadline and then reports partial: what it moved is
// committed, and a next run goes on from there.
func (s *Server) tierUser(ctx context.Context, user string, pol *tiering.Policy) (moved int, segments []string, partial bool, err error) {
	segments = []string{}
	for {
		if d, ok := ctx.Deadline(); ok && time.Until(d) < tierMargin {
			return moved, segments, true, nil
		}
		var n int
		var keys []string
		err := s.transactCtx(ctx, user, readsMemories, func(ctx context.Context, shard uint32, t *userTxn) error {
			var err error
			n, keys, err = s.tierOnce(ctx, shard, t, pol)
			return err
		})
		if err != nil {
			return moved, segments, false, err
		}
		moved, segments = moved+n, append(segments, keys...)
		if len(keys) < maxGroupsPerTxn {
			return moved, segments, false, nil
		}
	}
}

// parseAge reads a Go duration or a number of days ("180d").
func parseAge(v string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 {
			return 0, memory.FieldError("older_than", "not a positive number of days: %q", v)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, memory.FieldError("older_than", "not a positive duration (e.g. 180d, 4320h): %q", v)
	}
	return d, nil
}

// tierOnce decides one transaction's worth of segments: the policy's groups, each encoded, its archive
// entry put in the hot tier, its items deleted.
func (s *Server) tierOnce(ctx context.Context, shard uint32, t *userTxn, pol *tiering.Policy) (int, []string, error) {
	access, err := s.readAccess(ctx, shard, t)
	if err != nil {
		return 0, nil, err
	}
	ms, err := s.c.Recent(ctx, shard, t.user, nil, 0, false)
	if err != nil {
		return 0, nil, err
	}
	stats := map[string]tiering.AccessStat{}
	for id, n := range access {
		stats[id] = tiering.AccessStat{Recent: n.Reads}
	}
	groups := pol.Select(ms, stats, t.now)
	moved, keys := 0, []string{}
	for i, g := range groups {
		if i == maxGroupsPerTxn {
			break
		}
		seg, err := tiering.Encode(g.Items, g.Meta())
		if err != nil {
			return 0, nil, err
		}
		key := tiering.SegmentKey(shard, g.Meta(), tiering.SegmentID(seg))
		entry := tiering.NewArchiveEntry(g, key, tiering.Checksum(seg), tiering.ArchiveOptions{})
		am := entry.Memory(s.ids.New(t.now), t.now)
		t.puts = append(t.puts, am)
		if err := s.storeSegment(ctx, t, key, seg, g.Meta().Type, len(g.Items)); err != nil {
			return 0, nil, err
		}
		for _, m := range g.Items {
			t.deletes = append(t.deletes, m.ID)
		}
		if err := t.history(am.ID, "ADD", nil, map[string]any{"segment": key, "items": len(g.Items)}, "tier: archive entry"); err != nil {
			return 0, nil, err
		}
		moved, keys = moved+len(g.Items), append(keys, key)
	}
	return moved, keys, nil
}

// accessRecord counts the escalated reads of one archive entry.
type accessRecord struct {
	Reads []time.Time `json:"reads"`
}

func (s *Server) readAccess(ctx context.Context, shard uint32, t *userTxn) (map[string]accessRecord, error) {
	rd, err := s.c.ReadSide(ctx, shard, storage.SpaceAccess, t.user, "", 0, false)
	if err != nil {
		return nil, err
	}
	t.observe(rd.Rev)
	out := map[string]accessRecord{}
	for _, kv := range rd.Items {
		var a accessRecord
		if json.Unmarshal(kv.Value, &a) == nil {
			out[kv.Key] = a
		}
	}
	return out, nil
}

// readSegment fetches and decodes the segment an archive entry points to, checking its checksum.
func (s *Server) readSegment(ctx context.Context, shard uint32, user string, am memory.Memory) ([]memory.Memory, error) {
	key := am.Metadata["segment"]
	rd, err := s.c.ReadSide(ctx, shard, storage.SpaceCold, user, key, 1, false)
	if err != nil {
		return nil, err
	}
	if len(rd.Items) == 0 || rd.Items[0].Key != key {
		return nil, fmt.Errorf("archive entry %s: segment %s is missing", am.ID, key)
	}
	rec, err := decodeCold(key, rd.Items[0].Value)
	if err != nil {
		return nil, err
	}
	seg, err := s.segmentBytes(ctx, key, rec)
	if err != nil {
		return nil, err
	}
	if want := am.Metadata["checksum"]; want != "" && want != fmt.Sprintf("%016x", tiering.Checksum(seg)) {
		return nil, fmt.Errorf("segment %s: checksum mismatch", key)
	}
	_, items, err := tiering.Decode(seg)
	return items, err
}

// rehydrate turns an archive hit into cold evidence: the segment's items that fit the query (lazy
// rehydration, for this answer only), and counts the read toward a warm restore.
func (cr *contextRun) rehydrate(am memory.Memory, score float64) error {
	items, err := cr.s.readSegment(cr.ctx, cr.shard, cr.user, am)
	if err != nil {
		return err
	}
	for _, m := range items {
		if tr := cr.plan.Time; tr != nil && !tr.Contains(m.OccurredAt) {
			continue
		}
		rel := consolidation.LexicalSimilarity(cr.req.Query, m.Text)
		if rel < 0.05 {
			continue
		}
		cr.add(retrieval.Evidence{ID: m.ID, Type: m.Type, Text: m.Text, Time: m.OccurredAt,
			Score: min(1, 0.5*score+0.5*rel+0.2), Entities: m.Entities}, "cold")
	}
	cr.coldHits = append(cr.coldHits, am.ID)
	return nil
}

// noteColdReads records the escalated reads of archive entries and restores to the hot tier those read
// Options.WarmRestoreAfter times. It runs after the answer, on its own deadline: a read never waits for a write.
func (s *Server) noteColdReads(user string, entries []string) {
	if len(entries) == 0 || s.opts.WarmRestoreAfter < 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := s.transactCtx(ctx, user, readsMemories, func(ctx context.Context, shard uint32, t *userTxn) error {
		access, err := s.readAccess(ctx, shard, t)
		if err != nil {
			return err
		}
		for _, id := range entries {
			a := access[id]
			a.Reads = append(a.Reads, t.now)
			if len(a.Reads) < s.opts.WarmRestoreAfter {
				if err := t.setSide(storage.SpaceAccess, id, a); err != nil {
					return err
				}
				continue
			}
			if err := s.warmRestore(ctx, shard, t, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		s.log.Warn("record archive reads", "user_id", user, "err", err)
	}
}

// warmRestore brings an archive entry's memories back to the hot tier (re-embedded) and drops the entry and
// its segment.
func (s *Server) warmRestore(ctx context.Context, shard uint32, t *userTxn, entryID string) error {
	am, err := s.c.Get(ctx, shard, t.user, entryID, false)
	if err != nil {
		return err
	}
	items, err := s.readSegment(ctx, shard, t.user, am)
	if err != nil {
		return err
	}
	for _, m := range items {
		m.Embedding, m.EmbedModel = nil, ""
		t.puts = append(t.puts, m)
	}
	t.deletes = append(t.deletes, entryID)
	key := am.Metadata["segment"]
	t.delSide(storage.SpaceCold, key)
	t.delSide(storage.SpaceAccess, entryID)
	if s.opts.ColdStore != nil {
		t.afterCommit(func(ctx context.Context) error { return s.opts.ColdStore.Delete(ctx, key) })
	}
	s.metrics.triggers.WithLabelValues("warm_restore").Inc()
	return t.history(entryID, "DELETE", nil, map[string]any{"restored": len(items)}, "tier: warm restore")
}

// handleTierStatus counts a user's hot memories (encoded size, embeddings included) and cold segments per type.
func (s *Server) handleTierStatus(w http.ResponseWriter, r *http.Request, c *decoded[noFields]) {
	user := c.user
	if user == "" { // the scope required a principal that sees every user
		s.tierStatusAll(w, r)
		return
	}
	shard, ok := s.shard(w, r, user)
	if !ok {
		return
	}
	st, err := s.tierStatus(r.Context(), shard, user)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) tierStatus(ctx context.Context, shard uint32, user string) (apiv1.TierStatusResponse, error) {
	out := apiv1.TierStatusResponse{UserID: user, Shard: shard, Types: []apiv1.TierCount{}}
	byType := map[memory.Type]*apiv1.TierCount{}
	get := func(t memory.Type) *apiv1.TierCount {
		if byType[t] == nil {
			byType[t] = &apiv1.TierCount{Type: string(t)}
		}
		return byType[t]
	}
	ms, err := s.c.Recent(ctx, shard, user, nil, 0, false)
	if err != nil {
		return out, err
	}
	dim := s.emb.Dim() // Recent strips embeddings: count them back at the model's size (0 until a remote model answered)
	for i := range ms {
		tc := get(ms[i].Type)
		if ms[i].IsArchive() {
			tc.Archive++
			continue
		}
		ms[i].Embedding = make([]float32, dim)
		rec, err := storage.EncodeMemoryAs(&ms[i], s.c.RecordFormat())
		if err != nil {
			return out, err
		}
		tc.HotCount++
		tc.HotBytes += int64(len(rec))
	}
	rd, err := s.c.ReadSide(ctx, shard, storage.SpaceCold, user, "", 0, false)
	if err != nil {
		return out, err
	}
	for _, kv := range rd.Items {
		rec, err := decodeCold(kv.Key, kv.Value)
		if err != nil {
			return out, err
		}
		if p := rec.ptr; p != nil {
			tc := get(p.Type)
			tc.ColdCount += p.Count
			tc.ColdBytes += int64(p.Size)
			continue
		}
		meta, err := tiering.ReadHeader(rec.inline)
		if err != nil {
			return out, fmt.Errorf("segment %s: %w", kv.Key, err)
		}
		tc := get(meta.Type)
		tc.ColdCount += meta.Count
		tc.ColdBytes += int64(len(rec.inline))
	}
	for _, t := range memory.Types {
		if tc := byType[t]; tc != nil {
			out.Types = append(out.Types, *tc)
		}
	}
	return out, nil
}

// RunCompactor is the background compactor: every interval, on the shards this node leads, each user's hot
// memories are checked against the tiering policy and what has aged moves to cold segments, through the
// same guarded transaction as `tier run`. Only the shard's leader runs it, so every replica sees one decision.
func (s *Server) RunCompactor(ctx context.Context, c Sweeper, interval time.Duration) {
	if interval <= 0 {
		return
	}
	pol, err := tiering.NewPolicy(tiering.Options{})
	if err != nil {
		s.log.Error("compactor: policy", "err", err)
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.compactOnce(ctx, c, pol)
		}
	}
}

func (s *Server) compactOnce(ctx context.Context, c Sweeper, pol *tiering.Policy) (moved int) {
	start := time.Now()
	for _, shard := range c.LeaderShards() {
		var users []string
		if err := c.LocalUsers(shard, func(u string) bool { users = append(users, u); return ctx.Err() == nil }); err != nil {
			s.log.Warn("compactor: list users", "shard", shard, "err", err)
			continue
		}
		for _, u := range users {
			n, _, _, err := s.tierUser(ctx, u, pol)
			moved += n
			if err != nil {
				s.log.Warn("compactor: tier user", "user_id", u, "err", err)
			}
		}
	}
	if moved > 0 {
		s.log.Info("compactor: tiered", "memories", moved, "took", time.Since(start).Round(time.Millisecond))
	}
	return moved
}
