package server

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
)

// handleWorkspaceLines answers memory_get: lines start_line..start_line+lines-1 of a file as last synced.
// MEMORY.md is not found for a group session, as a private memory fetched by id is not.
func (s *Server) handleWorkspaceLines(w http.ResponseWriter, r *http.Request, c *decoded[noFields]) {
	agent, q, err := s.wsParams(r, "path", "start_line", "lines", "session_type")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	path := q["path"]
	start, err := intParam("start_line", q["start_line"], 1)
	if err == nil {
		err = apiv1.ValidateWorkspacePath(path)
	}
	var n int
	if err == nil {
		n, err = intParam("lines", q["lines"], 0)
	}
	var group bool
	if err == nil {
		group, err = isGroup(q["session_type"])
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if group && apiv1.IsPrivateWorkspacePath(path) {
		writeError(w, http.StatusNotFound, "not_found", path+" is private memory: a group session never reads it", "path")
		return
	}
	shard, ok := s.shard(w, r, c.user)
	if !ok {
		return
	}
	files, _, err := s.readWorkspace(r.Context(), shard, c.user, agent, path)
	if err == nil && len(files) == 0 {
		writeError(w, http.StatusNotFound, "not_found", "path: "+path+" has not been synced", "path")
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out, err := sliceLines(files[0], start, n)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// intParam parses a non-negative integer query parameter; def when absent. start_line must be at least 1.
func intParam(name, v string, def int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || (name == "start_line" && n < 1) {
		return 0, memory.FieldError(name, "not a valid line number or count: %q", v)
	}
	return n, nil
}

// sliceLines cuts lines start..start+n-1 (n 0: to the end) out of the stored bytes, line ends included.
func sliceLines(f wsStored, start, n int) (apiv1.WorkspaceLines, error) {
	out := apiv1.WorkspaceLines{Path: f.Path, StartLine: start, TotalLines: f.Lines}
	if start > f.Lines && !(start == 1 && f.Lines == 0) {
		return out, memory.FieldError("start_line", "%d is past the end of %s (%d lines)", start, f.Path, f.Lines)
	}
	end := f.Lines
	if n > 0 && start+n-1 < end {
		end = start + n - 1
	}
	lo, hi := lineOffset(f.Content, start), lineOffset(f.Content, end+1)
	out.EndLine, out.Text = max(end, start-1), f.Content[lo:hi]
	return out, nil
}

// lineOffset is the byte offset where line (1-based) starts; past the last line, the length.
func lineOffset(s string, line int) int {
	off := 0
	for l := 1; l < line; l++ {
		i := strings.IndexByte(s[off:], '\n')
		if i < 0 {
			return len(s)
		}
		off += i + 1
	}
	return off
}

// handleWorkspaceSearch answers memory_search: a hybrid search over the workspace's chunk records, each hit
// given its file's current line range from the manifest. A group session never sees MEMORY.md: its records
// are private (left out by the index paths) and its hits are dropped here too.
func (s *Server) handleWorkspaceSearch(w http.ResponseWriter, r *http.Request, c *decoded[apiv1.WorkspaceSearchRequest]) {
	req := c.body
	if req.MaxResults < 0 || req.MaxResults > 100 {
		s.fail(w, r, memory.FieldError("maxResults", "must be between 1 and 100"))
		return
	}
	k := req.MaxResults
	if k == 0 {
		k = 6
	}
	q, err := s.buildQuery(apiv1.SearchRequest{UserID: c.user, Query: req.Query, K: 2 * k, MinScore: req.MinScore,
		AgentID: req.AgentID, Tags: []string{apiv1.WorkspaceTag}, SessionType: req.SessionType}, nil)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !s.embedQuery(w, r, &q) {
		return
	}
	shard, ok := s.shard(w, r, c.user)
	if !ok {
		return
	}
	res, err := s.c.Search(r.Context(), shard, q, false)
	var files []wsStored
	if err == nil {
		files, _, err = s.readWorkspace(r.Context(), shard, c.user, req.AgentID, "")
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	where := map[string]apiv1.WorkspaceChunk{} // record id -> its chunk now
	for _, f := range files {
		for _, ch := range f.Chunks {
			where[ch.ID] = ch
		}
	}
	out := apiv1.WorkspaceSearchResponse{Results: []apiv1.WorkspaceHit{}}
	for _, h := range res {
		m := h.Memory
		ch, ok := where[m.ID]
		path := m.Metadata[apiv1.MetaWorkspacePath]
		if !ok || m.AgentID != req.AgentID || (q.SharedOnly && !m.IsShared()) || len(out.Results) == k {
			continue // another agent's, replaced since, or private in a group session
		}
		out.Results = append(out.Results, apiv1.WorkspaceHit{Path: path, StartLine: ch.StartLine, EndLine: ch.EndLine,
			Text: snippet(m.Text), Score: h.Score, Provider: embedProvider(m.EmbedModel), Model: m.EmbedModel})
	}
	writeJSON(w, http.StatusOK, out)
}

// snippet cuts a chunk to the reference's ~700 characters.
func snippet(s string) string {
	if n := 0; len(s) > apiv1.WorkspaceSnippetChars {
		for i := range s {
			if n == apiv1.WorkspaceSnippetChars {
				return s[:i]
			}
			n++
		}
	}
	return s
}

// embedProvider names an embedder's kind from its fingerprint ("hashed-v1/…" → "hashed", "openai/…" → "openai").
func embedProvider(fp string) string {
	p, _, _ := strings.Cut(fp, "/")
	if i := strings.LastIndex(p, "-v"); i > 0 {
		p = p[:i]
	}
	return p
}
