package workspace

import (
	"context"
	"fmt"
	"time"

	"github.com/memcluster/memcluster/apiv1"
)

// Client is what the package needs of the memcluster API (client.Client has it).
type Client interface {
	Workspace(ctx context.Context, user, agent string) (apiv1.WorkspaceState, error)
	PutWorkspaceFile(ctx context.Context, user string, req apiv1.WorkspacePutRequest) (apiv1.WorkspacePutResponse, error)
	DeleteWorkspaceFile(ctx context.Context, user, agent, path string) (apiv1.WorkspaceDeleteResponse, error)
	WorkspaceLines(ctx context.Context, user string, req apiv1.WorkspaceLinesRequest) (apiv1.WorkspaceLines, error)
}

// Options configures a Syncer.
type Options struct {
	Dir    string // the workspace directory, holding MEMORY.md and memory/ (required)
	User   string // required
	Agent  string // "" is the user's own workspace
	Client Client // required
	// Chunk sets the chunker; the zero value takes apiv1.DefaultChunkParams (400 tokens, 80 overlap).
	Chunk apiv1.ChunkParams
	// Progress, when set, is told of each file sent or removed as it happens.
	Progress func(msg string)
	// Debounce is how long Watch waits for the files to stay quiet before it syncs; default DefaultDebounce.
	Debounce time.Duration
}

func (o Options) withDefaults() (Options, error) {
	if o.Chunk == (apiv1.ChunkParams{}) {
		o.Chunk = apiv1.DefaultChunkParams
	}
	if o.Debounce == 0 {
		o.Debounce = DefaultDebounce
	}
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	switch {
	case o.Dir == "":
		return o, fmt.Errorf("%w: Dir is required", ErrInvalidOptions)
	case o.User == "":
		return o, fmt.Errorf("%w: User is required", ErrInvalidOptions)
	case o.Client == nil:
		return o, fmt.Errorf("%w: Client is required", ErrInvalidOptions)
	case o.Debounce < 0:
		return o, fmt.Errorf("%w: Debounce %s is negative", ErrInvalidOptions, o.Debounce)
	}
	if err := o.Chunk.Validate(); err != nil {
		return o, fmt.Errorf("%w: %v", ErrInvalidOptions, err)
	}
	return o, nil
}

// Syncer keeps one workspace directory indexed.
type Syncer struct{ opts Options }

// New returns a Syncer for opts.
func New(opts Options) (*Syncer, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Syncer{opts: o}, nil
}

// Report is what a sync did. Chunk counts: Sent had their text sent (and were embedded), Unchanged were
// not sent (their file did not change, or the chunk is held already), Removed were deleted from the index.
type Report struct {
	Scanned      int          `json:"files_scanned"`
	Sent         int          `json:"chunks_sent"`
	Unchanged    int          `json:"chunks_unchanged"`
	Removed      int          `json:"chunks_removed"`
	FilesChanged int          `json:"files_changed"`
	FilesDeleted int          `json:"files_deleted"`
	Files        []FileReport `json:"files,omitempty"`
}

// FileReport is one file a sync sent or removed.
type FileReport struct {
	Path      string `json:"path"`
	Deleted   bool   `json:"deleted,omitempty"`
	Sent      int    `json:"chunks_sent"`
	Unchanged int    `json:"chunks_unchanged"`
	Removed   int    `json:"chunks_removed"`
}

// Sync brings the index in line with the directory: changed files send their new chunks, files gone from
// the directory are removed. Each file is one atomic request; a failure stops the sync (a later one resumes).
func (s *Syncer) Sync(ctx context.Context) (Report, error) {
	o := s.opts
	local, err := scan(o.Dir)
	if err != nil {
		return Report{}, err
	}
	state, err := o.Client.Workspace(ctx, o.User, o.Agent)
	if err != nil {
		return Report{}, fmt.Errorf("read workspace index: %w", err)
	}
	fp := apiv1.WorkspaceFingerprint(state.EmbedModel, o.Chunk)
	stored := map[string]apiv1.WorkspaceFile{}
	for _, f := range state.Files {
		stored[f.Path] = f
	}
	rep := Report{Scanned: len(local)}
	for _, f := range local {
		old, had := stored[f.Path]
		delete(stored, f.Path)
		if had && old.SHA256 == f.SHA256 && old.Fingerprint == fp {
			rep.Unchanged += len(old.Chunks)
			continue
		}
		fr, err := s.put(ctx, f, old, had && old.Fingerprint == fp)
		if err != nil {
			return rep, err
		}
		rep.add(fr)
	}
	for _, old := range state.Files {
		if _, gone := stored[old.Path]; !gone {
			continue
		}
		res, err := o.Client.DeleteWorkspaceFile(ctx, o.User, o.Agent, old.Path)
		if err != nil {
			return rep, fmt.Errorf("remove %s: %w", old.Path, err)
		}
		o.Progress(fmt.Sprintf("removed %s (%d chunks)", old.Path, res.Removed))
		rep.add(FileReport{Path: old.Path, Deleted: true, Removed: res.Removed})
	}
	return rep, nil
}

// put sends one file: every chunk's range and hash, the text only of chunks the server does not hold.
func (s *Syncer) put(ctx context.Context, f localFile, old apiv1.WorkspaceFile, reuse bool) (FileReport, error) {
	o := s.opts
	held := map[string]bool{}
	if reuse {
		for _, ch := range old.Chunks {
			held[ch.Hash] = true
		}
	}
	req := apiv1.WorkspacePutRequest{AgentID: o.Agent, Path: f.Path, Size: len(f.Content), SHA256: f.SHA256,
		Chunk: o.Chunk}
	sent := 0
	for _, ch := range Split(f.Content, o.Chunk) {
		wc := apiv1.WorkspaceChunk{Hash: ch.Hash, StartLine: ch.StartLine, EndLine: ch.EndLine,
			StartByte: ch.StartByte, EndByte: ch.EndByte}
		if !held[ch.Hash] {
			wc.Text, sent = &ch.Text, sent+1
		}
		req.Chunks = append(req.Chunks, wc)
	}
	res, err := o.Client.PutWorkspaceFile(ctx, o.User, req)
	if err != nil {
		return FileReport{}, fmt.Errorf("sync %s: %w", f.Path, err)
	}
	o.Progress(fmt.Sprintf("synced %s: %d chunks sent, %d unchanged, %d removed", f.Path, sent,
		len(req.Chunks)-sent, res.Removed))
	return FileReport{Path: f.Path, Sent: sent, Unchanged: len(req.Chunks) - sent, Removed: res.Removed}, nil
}

func (r *Report) add(f FileReport) {
	r.Sent, r.Unchanged, r.Removed = r.Sent+f.Sent, r.Unchanged+f.Unchanged, r.Removed+f.Removed
	if f.Deleted {
		r.FilesDeleted++
	} else {
		r.FilesChanged++
	}
	r.Files = append(r.Files, f)
}
