package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

// An OpenClaw workspace is indexed as memory records, one per chunk (semantic, tagged "workspace", shared
// unless the file is MEMORY.md), plus one side record per file (space 'o', key agent \x00 path): the manifest
// with the file's bytes as last synced. Records are searched like any memory; the manifest gives a hit its
// current line range and lets lines be read back and files exported byte for byte. A put commits the
// manifest, the new records and the removal of dropped ones as one user transaction (workspace/DESIGN.md).

// wsStored is the side record of one synced file.
type wsStored struct {
	apiv1.WorkspaceFile
	Content string `json:"content"`
}

func wsKey(agent, path string) string { return agent + "\x00" + path }

// wsParams reads the agent_id query parameter (validated; once at most) and the others named.
func (s *Server) wsParams(r *http.Request, names ...string) (agent string, vals map[string]string, err error) {
	q := r.URL.Query()
	vals = map[string]string{}
	for _, n := range append([]string{"agent_id"}, names...) {
		if len(q[n]) > 1 {
			return "", nil, memory.FieldError(n, "given more than once")
		}
		vals[n] = q.Get(n)
	}
	agent = vals["agent_id"]
	return agent, vals, s.opts.Limits.ValidateID("agent_id", agent, false)
}

// readWorkspace reads the manifests of one agent's workspace (all files, or the one path), with the user's
// revision.
func (s *Server) readWorkspace(ctx context.Context, shard uint32, user, agent, path string) ([]wsStored, uint64, error) {
	rd, err := s.c.ReadSide(ctx, shard, storage.SpaceWorkspace, user, wsKey(agent, path), 0, false)
	if err != nil {
		return nil, 0, err
	}
	var out []wsStored
	for _, kv := range rd.Items {
		a, p, _ := strings.Cut(kv.Key, "\x00")
		if a != agent || (path != "" && p != path) {
			continue // another agent's prefix, or a longer path sharing this one's prefix
		}
		var f wsStored
		if err := json.Unmarshal(kv.Value, &f); err != nil {
			return nil, 0, fmt.Errorf("decode workspace file %q: %w", p, err)
		}
		out = append(out, f)
	}
	return out, rd.Rev, nil
}

func (s *Server) handleWorkspace(w http.ResponseWriter, r *http.Request, c *decoded[noFields]) {
	agent, _, err := s.wsParams(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	shard, ok := s.shard(w, r, c.user)
	if !ok {
		return
	}
	files, _, err := s.readWorkspace(r.Context(), shard, c.user, agent, "")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := apiv1.WorkspaceState{UserID: c.user, AgentID: agent, EmbedModel: s.emb.Fingerprint(),
		Files: make([]apiv1.WorkspaceFile, 0, len(files))}
	for _, f := range files {
		out.Files = append(out.Files, f.WorkspaceFile)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleWorkspaceDelete(w http.ResponseWriter, r *http.Request, c *decoded[noFields]) {
	agent, q, err := s.wsParams(r, "path")
	if err == nil {
		err = apiv1.ValidateWorkspacePath(q["path"])
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := apiv1.WorkspaceDeleteResponse{Path: q["path"]}
	if !s.transact(w, r, c.user, readsMemories, func(ctx context.Context, shard uint32, t *userTxn) error {
		out.Deleted, out.Removed = false, 0
		files, rev, err := s.readWorkspace(ctx, shard, c.user, agent, q["path"])
		if err != nil || len(files) == 0 {
			return err
		}
		t.observe(rev)
		for _, ch := range files[0].Chunks {
			if ch.ID != "" {
				t.deletes = append(t.deletes, ch.ID)
			}
		}
		t.delSide(storage.SpaceWorkspace, wsKey(agent, q["path"]))
		out.Deleted, out.Removed = true, len(t.deletes)
		return nil
	}) {
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleWorkspacePut(w http.ResponseWriter, r *http.Request, c *decoded[apiv1.WorkspacePutRequest]) {
	req := c.body
	if err := s.validateWorkspacePut(req); err != nil {
		s.fail(w, r, err)
		return
	}
	fp := apiv1.WorkspaceFingerprint(s.emb.Fingerprint(), req.Chunk)
	var out apiv1.WorkspacePutResponse
	if !s.transact(w, r, c.user, readsMemories, func(ctx context.Context, shard uint32, t *userTxn) error {
		files, rev, err := s.readWorkspace(ctx, shard, c.user, req.AgentID, req.Path)
		if err != nil {
			return err
		}
		t.observe(rev)
		var old *wsStored
		if len(files) == 1 && files[0].Fingerprint == fp {
			old = &files[0] // same fingerprint: its chunks and their records may be kept
		}
		f, res, err := s.applyWorkspacePut(t, c.user, req, fp, old)
		if err != nil {
			return err
		}
		if len(files) == 1 && old == nil {
			res.Removed += deleteAllChunks(t, files[0])
		}
		out = res
		return t.setSide(storage.SpaceWorkspace, wsKey(req.AgentID, req.Path), f)
	}) {
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// deleteAllChunks removes every chunk record of a file indexed under another fingerprint.
func deleteAllChunks(t *userTxn, f wsStored) int {
	n := 0
	for _, ch := range f.Chunks {
		if ch.ID != "" {
			t.deletes, n = append(t.deletes, ch.ID), n+1
		}
	}
	return n
}

// validateWorkspacePut checks what can be checked without the stored manifest.
func (s *Server) validateWorkspacePut(req apiv1.WorkspacePutRequest) error {
	if err := s.opts.Limits.ValidateID("agent_id", req.AgentID, false); err != nil {
		return err
	}
	if err := apiv1.ValidateWorkspacePath(req.Path); err != nil {
		return err
	}
	if err := req.Chunk.Validate(); err != nil {
		return err
	}
	switch {
	case req.Size < 0 || req.Size > apiv1.MaxWorkspaceFileBytes:
		return memory.FieldError("size", "must be between 0 and %d bytes, not %d", apiv1.MaxWorkspaceFileBytes, req.Size)
	case !isHexSHA256(req.SHA256):
		return memory.FieldError("sha256", "not a hex SHA-256")
	case len(req.Chunks) > apiv1.MaxBatch:
		return memory.FieldError("chunks", "more than %d chunks", apiv1.MaxBatch)
	case req.Size > 0 && len(req.Chunks) == 0:
		return memory.FieldError("chunks", "required for a non-empty file")
	}
	return nil
}

func isHexSHA256(h string) bool {
	b, err := hex.DecodeString(h)
	return err == nil && len(b) == sha256.Size && strings.ToLower(h) == h
}

func hashText(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// applyWorkspacePut rebuilds the file from the chunks (new texts, or the stored bytes of chunks it already
// holds), checks it against the declared size and hash, and adds to t the new chunks' records and the removal
// of the old records no chunk keeps.
func (s *Server) applyWorkspacePut(t *userTxn, user string, req apiv1.WorkspacePutRequest, fp string,
	old *wsStored) (wsStored, apiv1.WorkspacePutResponse, error) {
	res := apiv1.WorkspacePutResponse{Path: req.Path}
	held := map[string][]apiv1.WorkspaceChunk{} // hash -> stored chunks with that text
	if old != nil {
		for _, ch := range old.Chunks {
			held[ch.Hash] = append(held[ch.Hash], ch)
		}
	}
	var content strings.Builder
	chunks := make([]apiv1.WorkspaceChunk, len(req.Chunks))
	for i, ch := range req.Chunks {
		text, err := chunkText(i, ch, held, old, content.Len())
		if err != nil {
			return wsStored{}, res, err
		}
		content.WriteString(text[content.Len()-ch.StartByte:])
		ch.Text = nil
		if kept := held[ch.Hash]; len(kept) > 0 {
			ch.ID, held[ch.Hash] = kept[0].ID, kept[1:]
			res.Unchanged++
		} else if strings.TrimSpace(text) != "" {
			m, err := s.workspaceRecord(t, user, req, ch.Hash, text)
			if err != nil {
				return wsStored{}, res, fmt.Errorf("chunks[%d]: %w", i, err)
			}
			ch.ID = m.ID
			t.puts = append(t.puts, m)
			res.Embedded++
		}
		chunks[i] = ch
	}
	body := content.String()
	if len(body) != req.Size || hashText(body) != req.SHA256 {
		return wsStored{}, res, memory.FieldError("chunks", "rebuild %d bytes with SHA-256 %s, not the %d bytes and sha256 declared",
			len(body), hashText(body), req.Size)
	}
	for _, rest := range held {
		for _, ch := range rest {
			if ch.ID != "" {
				t.deletes = append(t.deletes, ch.ID)
				res.Removed++
			}
		}
	}
	f := wsStored{Content: body, WorkspaceFile: apiv1.WorkspaceFile{Path: req.Path, Size: req.Size, SHA256: req.SHA256,
		Lines: countLines(body), Fingerprint: fp, Chunks: chunks}}
	return f, res, nil
}

// chunkText returns chunk i's bytes (sent, or held from the stored file) after checking that it continues the
// file rebuilt so far (end bytes) without a gap and that its bytes hash to its hash.
func chunkText(i int, ch apiv1.WorkspaceChunk, held map[string][]apiv1.WorkspaceChunk, old *wsStored, end int) (string, error) {
	field := fmt.Sprintf("chunks[%d]", i)
	switch {
	case ch.StartByte < 0 || ch.StartByte > end || (i == 0 && ch.StartByte != 0):
		return "", memory.FieldError(field+".start_byte", "%d leaves a gap after byte %d", ch.StartByte, end)
	case ch.EndByte <= end || ch.EndByte > apiv1.MaxWorkspaceFileBytes:
		return "", memory.FieldError(field+".end_byte", "%d does not extend the file past byte %d", ch.EndByte, end)
	case ch.StartLine < 1 || ch.EndLine < ch.StartLine:
		return "", memory.FieldError(field+".start_line", "line range %d..%d", ch.StartLine, ch.EndLine)
	}
	var text string
	switch {
	case ch.Text != nil:
		text = *ch.Text
	case len(held[ch.Hash]) > 0:
		h := held[ch.Hash][0]
		text = old.Content[h.StartByte:h.EndByte]
	default:
		return "", memory.FieldError(field+".text", "required: chunk %s is not held under this fingerprint", ch.Hash)
	}
	switch {
	case len(text) != ch.EndByte-ch.StartByte:
		return "", memory.FieldError(field+".text", "%d bytes for the byte range %d..%d", len(text), ch.StartByte, ch.EndByte)
	case !utf8.ValidString(text):
		return "", memory.FieldError(field+".text", "not valid UTF-8")
	case hashText(text) != ch.Hash:
		return "", memory.FieldError(field+".hash", "does not match the SHA-256 of the chunk's text")
	}
	return text, nil
}

// workspaceRecord is the memory record that indexes one chunk: MEMORY.md is private, daily logs shared.
func (s *Server) workspaceRecord(t *userTxn, user string, req apiv1.WorkspacePutRequest, hash, text string) (memory.Memory, error) {
	scope := memory.Shared
	if apiv1.IsPrivateWorkspacePath(req.Path) {
		scope = memory.Private
	}
	m := memory.Memory{ID: t.ids.New(t.now), UserID: user, AgentID: req.AgentID, Type: memory.Semantic, Text: text,
		OccurredAt: t.now, CreatedAt: t.now, Tags: []string{apiv1.WorkspaceTag}, Importance: 0.5, Scope: scope,
		Metadata: map[string]string{memory.MetaSource: apiv1.WorkspaceTag, apiv1.MetaWorkspacePath: req.Path,
			apiv1.MetaWorkspaceHash: hash}}
	return m, s.opts.Limits.Validate(&m)
}

// countLines counts lines as an editor does: a final line end does not start another line.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}
