package apiv1

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/memcluster/memcluster/memory"
)

// Routes of an OpenClaw Markdown workspace (MEMORY.md and memory/*.md) indexed for one user and, optionally,
// one agent (agent_id; empty is the user's own workspace). The files stay the source of truth; these routes
// hold the index and the bytes last synced (workspace/DESIGN.md).
const (
	PathWorkspace       = "/v1/users/{user_id}/workspace"        // GET ?agent_id=A: the synced files' manifests
	PathWorkspaceFiles  = "/v1/users/{user_id}/workspace/files"  // PUT: one file's chunks; DELETE ?agent_id&path
	PathWorkspaceLines  = "/v1/users/{user_id}/workspace/lines"  // GET ?path&start_line&lines&agent_id&session_type
	PathWorkspaceSearch = "/v1/users/{user_id}/workspace/search" // POST: hybrid search over the chunks
)

// Workspace limits.
const (
	// MaxWorkspaceFileBytes bounds one synced file: its bytes are kept with the manifest for reads and export.
	MaxWorkspaceFileBytes = 256 << 10
	// WorkspaceSnippetChars bounds the text of one workspace search result (the reference's ~700 chars).
	WorkspaceSnippetChars = 700
	// WorkspaceMemoryFile is the curated long-term memory: private, never shown to a group session.
	WorkspaceMemoryFile = "MEMORY.md"
	// WorkspaceDailyDir holds the daily logs (memory/YYYY-MM-DD.md).
	WorkspaceDailyDir = "memory"
	// WorkspaceTag marks the memory records that index workspace chunks.
	WorkspaceTag = "workspace"
)

// Metadata keys of a workspace chunk's memory record. Line numbers live in the manifest, not here: an edit
// above an unchanged chunk moves it without re-sending it.
const (
	MetaWorkspacePath = "workspace_path"
	MetaWorkspaceHash = "workspace_hash"
)

// ChunkParams are the chunker's settings in tokens (about 4 characters each). They join the index
// fingerprint, so changing them re-indexes every file.
type ChunkParams struct {
	Tokens  int `json:"tokens"`
	Overlap int `json:"overlap"`
}

// DefaultChunkParams are the reference's: about 400 tokens per chunk, 80 tokens of overlap.
var DefaultChunkParams = ChunkParams{Tokens: 400, Overlap: 80}

// Validate checks the parameters.
func (p ChunkParams) Validate() error {
	if p.Tokens < 8 || p.Tokens > 4096 {
		return memory.FieldError("chunk.tokens", "must be between 8 and 4096, not %d", p.Tokens)
	}
	if p.Overlap < 0 || p.Overlap >= p.Tokens {
		return memory.FieldError("chunk.overlap", "must be between 0 and tokens-1, not %d", p.Overlap)
	}
	return nil
}

// WorkspaceFingerprint is the index fingerprint of a file: the embedder's fingerprint and the chunk
// parameters. A file indexed under another fingerprint is re-sent and re-embedded whole.
func WorkspaceFingerprint(embedModel string, p ChunkParams) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%s\x00chunk-v1/t%d/o%d", embedModel, p.Tokens, p.Overlap))
	return hex.EncodeToString(h[:8])
}

// ValidateWorkspacePath accepts exactly "MEMORY.md" and "memory/NAME.md" (slash-separated, relative, clean, no
// sub-directories), naming the problem otherwise.
func ValidateWorkspacePath(p string) error {
	bad := func(why string) error { return memory.FieldError("path", "%q %s", p, why) }
	switch {
	case p == "":
		return memory.FieldError("path", "required")
	case !utf8.ValidString(p) || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return bad("is not printable UTF-8")
	case strings.HasPrefix(p, "/") || strings.Contains(p, `\`) || (len(p) > 1 && p[1] == ':'):
		return bad("is absolute or not slash-separated: paths are relative to the workspace")
	case p != path.Clean(p) || strings.Contains(p, ".."):
		return bad("is not a clean path (no '.', '..' or empty segments)")
	case p == WorkspaceMemoryFile:
		return nil
	}
	dir, name := path.Split(p)
	if dir != WorkspaceDailyDir+"/" || !strings.HasSuffix(name, ".md") || name == ".md" || strings.HasPrefix(name, ".") {
		return bad("is outside MEMORY.md and memory/*.md")
	}
	return nil
}

// IsPrivateWorkspacePath reports whether a group session must never see the file (MEMORY.md).
func IsPrivateWorkspacePath(p string) bool { return p == WorkspaceMemoryFile }

// WorkspaceChunk is one chunk of a file: its line range (1-based, inclusive), its byte range [start, end) of
// the file, and the SHA-256 of its bytes. Chunks overlap; together they cover the file's bytes in order.
type WorkspaceChunk struct {
	Hash      string `json:"hash"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	StartByte int    `json:"start_byte"`
	EndByte   int    `json:"end_byte"`
	// Text is the chunk's bytes. In a put it is sent only for a chunk the server does not hold already (a
	// hash absent from the file's manifest, or any chunk when the fingerprint changed).
	Text *string `json:"text,omitempty"`
	// ID of the memory record that indexes the chunk (answers only; empty for a blank chunk).
	ID string `json:"id,omitempty"`
}

// WorkspaceFile is a synced file's manifest.
type WorkspaceFile struct {
	Path        string           `json:"path"`
	Size        int              `json:"size"`
	SHA256      string           `json:"sha256"`
	Lines       int              `json:"lines"`
	Fingerprint string           `json:"fingerprint"`
	Chunks      []WorkspaceChunk `json:"chunks"`
}

// WorkspaceState is the answer to GET .../workspace: what the index holds, and the embedder's fingerprint a
// client combines with its chunk parameters (WorkspaceFingerprint) to tell which files need re-indexing.
type WorkspaceState struct {
	UserID     string          `json:"user_id"`
	AgentID    string          `json:"agent_id,omitempty"`
	EmbedModel string          `json:"embed_model"`
	Files      []WorkspaceFile `json:"files"`
}

// WorkspacePutRequest is the body of PUT .../workspace/files: the whole chunk list of one file, texts only
// for chunks the server lacks. The server rebuilds the file from the chunks, checks it against Size and
// SHA256, and commits the manifest, the new chunks' records and the removal of dropped ones in one
// transaction — or nothing.
type WorkspacePutRequest struct {
	AgentID string           `json:"agent_id,omitempty"`
	Path    string           `json:"path"`
	Size    int              `json:"size"`
	SHA256  string           `json:"sha256"`
	Chunk   ChunkParams      `json:"chunk"`
	Chunks  []WorkspaceChunk `json:"chunks"`
}

// WorkspacePutResponse says what a put did.
type WorkspacePutResponse struct {
	Path      string `json:"path"`
	Embedded  int    `json:"embedded"`  // chunks whose text was sent and indexed
	Unchanged int    `json:"unchanged"` // chunks kept as they were (no text sent, not re-embedded)
	Removed   int    `json:"removed"`   // chunk records deleted
}

// WorkspaceDeleteResponse is the answer to DELETE .../workspace/files.
type WorkspaceDeleteResponse struct {
	Path    string `json:"path"`
	Deleted bool   `json:"deleted"`
	Removed int    `json:"removed"` // chunk records deleted
}

// WorkspaceLinesRequest is what memory_get asks, sent as the query of GET .../workspace/lines: Lines lines
// from StartLine (1-based; 0 means 1) of RelPath ("MEMORY.md" or "memory/NAME.md"); Lines 0 reads to the
// end. A group session (SessionType "group") is refused MEMORY.md (404).
type WorkspaceLinesRequest struct {
	AgentID     string
	RelPath     string
	StartLine   int
	Lines       int
	SessionType string
}

// WorkspaceLines is the answer to GET .../workspace/lines: lines StartLine..EndLine of the file as last
// synced, byte for byte (line ends included). Lines 0 (or none) reads to the end of the file.
type WorkspaceLines struct {
	Path       string `json:"path"`
	StartLine  int    `json:"startLine"`
	EndLine    int    `json:"endLine"`
	TotalLines int    `json:"totalLines"`
	Text       string `json:"text"`
}

// WorkspaceSearchRequest is the body of POST .../workspace/search. SessionType "group" leaves MEMORY.md out.
type WorkspaceSearchRequest struct {
	AgentID     string   `json:"agent_id,omitempty"`
	Query       string   `json:"query"`
	MaxResults  int      `json:"maxResults,omitempty"` // default 6
	MinScore    *float64 `json:"minScore,omitempty"`   // default 0.35
	SessionType string   `json:"session_type,omitempty"`
}

// WorkspaceHit is one workspace search result, shaped as OpenClaw's memory_search returns it.
type WorkspaceHit struct {
	Path      string  `json:"path"`
	StartLine int     `json:"startLine"`
	EndLine   int     `json:"endLine"`
	Text      string  `json:"text"` // the chunk, cut to WorkspaceSnippetChars characters
	Score     float64 `json:"score"`
	Provider  string  `json:"provider"` // the embedder's kind: hashed, openai, model2vec
	Model     string  `json:"model"`    // the embedder's full fingerprint
}

// WorkspaceSearchResponse lists hits, best first.
type WorkspaceSearchResponse struct {
	Results []WorkspaceHit `json:"results"`
}
