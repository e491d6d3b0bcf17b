package server

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

func (s *Server) handlePut(w http.ResponseWriter, r *http.Request, c *decoded[apiv1.PutRequest]) {
	m := s.newMemory(c.body, s.opts.Now().UTC())
	if err := s.opts.Limits.Validate(&m); err != nil {
		s.fail(w, r, err)
		return
	}
	ms, ok := s.store(w, r, []memory.Memory{m})
	if ok {
		writeJSON(w, http.StatusCreated, apiv1.PutResponse{Memory: ms[0]})
	}
}

func (s *Server) handlePutBatch(w http.ResponseWriter, r *http.Request, c *decoded[apiv1.PutBatchRequest]) {
	req := c.body
	if len(req.Memories) == 0 || len(req.Memories) > apiv1.MaxBatch {
		writeError(w, http.StatusBadRequest, "invalid_argument",
			fmt.Sprintf("memories: give 1 to %d memories", apiv1.MaxBatch), "memories")
		return
	}
	now := s.opts.Now().UTC()
	ms := make([]memory.Memory, len(req.Memories))
	for i, pr := range req.Memories {
		ms[i] = s.newMemory(pr, now)
		err := s.opts.Limits.Validate(&ms[i])
		if err == nil && ms[i].UserID != ms[0].UserID {
			err = memory.FieldError("user_id", "every memory of a batch must belong to one user (%q, then %q)",
				ms[0].UserID, ms[i].UserID)
		}
		var ve *memory.ValidationError
		if errors.As(err, &ve) {
			f := fmt.Sprintf("memories[%d].%s", i, ve.Field)
			writeError(w, http.StatusBadRequest, "invalid_argument", f+": "+ve.Msg, f)
			return
		}
	}
	if out, ok := s.store(w, r, ms); ok {
		writeJSON(w, http.StatusCreated, apiv1.PutBatchResponse{Memories: out})
	}
}

// newMemory applies the defaults to a put request: episodic, occurred now, importance 0.5.
func (s *Server) newMemory(req apiv1.PutRequest, now time.Time) memory.Memory {
	m := memory.Memory{UserID: req.UserID, AgentID: req.AgentID, RunID: req.RunID, Type: memory.Type(req.Type),
		Text: req.Text, OccurredAt: now, CreatedAt: now, Tags: req.Tags, Entities: req.Entities,
		Importance: 0.5, Metadata: req.Metadata, Scope: memory.Scope(req.Scope)}
	if m.Type == "" {
		m.Type = memory.Episodic
	}
	if req.OccurredAt != nil {
		m.OccurredAt = req.OccurredAt.UTC()
	}
	if req.Importance != nil {
		m.Importance = *req.Importance
	}
	return m
}

// store decides everything non-deterministic — ids, embeddings — and commits validated memories of one user as
// one raft entry: all of them or none.
func (s *Server) store(w http.ResponseWriter, r *http.Request, ms []memory.Memory) ([]memory.Memory, bool) {
	shard, ok := s.shard(w, r, ms[0].UserID)
	if !ok {
		return nil, false
	}
	texts := make([]string, len(ms))
	for i := range ms {
		texts[i] = ms[i].Text
	}
	vecs, err := s.emb.Embed(r.Context(), texts)
	if err != nil {
		writeError(w, http.StatusBadGateway, "embedding_failed", err.Error(), "")
		return nil, false
	}
	for i := range ms {
		ms[i].ID = s.ids.New(ms[i].CreatedAt)
		ms[i].Embedding, ms[i].EmbedModel = vecs[i], s.emb.Fingerprint()
	}
	if _, ok := s.commit(w, r, shard)(storage.Encoder{Records: s.c.RecordFormat()}.Put(ms)); !ok {
		return nil, false
	}
	for i := range ms {
		ms[i].Embedding = nil
	}
	return ms, true
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request, c *decoded[noFields]) {
	user := c.user
	id, ok := memoryID(w, r)
	if !ok {
		return
	}
	stale, ok := boolParam(w, r, "stale")
	if !ok {
		return
	}
	group, err := isGroup(r.URL.Query().Get("session_type"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	shard, ok := s.shard(w, r, user)
	if !ok {
		return
	}
	m, err := s.c.Get(r.Context(), shard, user, id, stale)
	if err == nil && group && !m.IsShared() {
		// Indistinguishable from a missing memory: a group session learns nothing of private memory.
		err = fmt.Errorf("memory %s: %w", id, memory.ErrNotFound)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	m.Embedding = nil
	writeJSON(w, http.StatusOK, m)
}

func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request, c *decoded[noFields]) {
	user := c.user
	id, ok := memoryID(w, r)
	if !ok {
		return
	}
	shard, ok := s.shard(w, r, user)
	if !ok {
		return
	}
	// The request id makes a retried proposal (the leader changed after committing) answer like the first.
	res, ok := s.commit(w, r, shard)(storage.EncodeDelete(storage.DeletePayload{UserID: user, IDs: []string{id},
		RequestID: s.ids.New(s.opts.Now())}))
	if !ok {
		return
	}
	if res.Deleted == 0 {
		writeError(w, http.StatusNotFound, "not_found", "memory "+id+" of user "+user+" not found", "id")
		return
	}
	writeJSON(w, http.StatusOK, apiv1.DeleteResponse{ID: id, Deleted: true})
}

// memoryID validates the {id} path segment.
func memoryID(w http.ResponseWriter, r *http.Request) (id string, ok bool) {
	id = r.PathValue("id")
	if !memory.ValidID(id) {
		writeError(w, http.StatusBadRequest, "invalid_argument", "id: not a memory id: "+strconv.Quote(id), "id")
		return "", false
	}
	return id, true
}

// commit returns a function that proposes an encoded command on shard and answers any failure itself (an
// encoding error included), so handlers read commit(w, r, shard)(storage.EncodeX(...)).
func (s *Server) commit(w http.ResponseWriter, r *http.Request, shard uint32) func([]byte, error) (storage.ApplyResult, bool) {
	return func(cmd []byte, err error) (storage.ApplyResult, bool) {
		if err == nil {
			var res storage.ApplyResult
			if res, err = s.c.Propose(r.Context(), shard, cmd); err == nil {
				return res, true
			}
		}
		s.fail(w, r, err)
		return storage.ApplyResult{}, false
	}
}

func (s *Server) shard(w http.ResponseWriter, r *http.Request, user string) (uint32, bool) {
	shard, err := s.c.ShardFor(r.Context(), user)
	if err != nil {
		s.fail(w, r, err)
		return 0, false
	}
	s.nameLeader(w, shard)
	return shard, true
}

// nameLeader names the node known to lead shard on the answer (apiv1.HeaderShardLeader), for clients that
// route a user's requests to it.
func (s *Server) nameLeader(w http.ResponseWriter, shard uint32) {
	if u := s.c.LeaderURL(shard); u != "" {
		w.Header().Set(apiv1.HeaderShardLeader, u)
	}
}

func boolParam(w http.ResponseWriter, r *http.Request, name string) (bool, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, true
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_argument", name+": not a boolean: "+strconv.Quote(v), name)
		return false, false
	}
	return b, true
}
