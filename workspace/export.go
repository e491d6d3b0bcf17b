package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memcluster/memcluster/apiv1"
)

// ExportReport is what an export wrote.
type ExportReport struct {
	Files []string `json:"files"`
	Bytes int      `json:"bytes"`
}

// Export writes every synced file back under the directory, byte for byte as last synced. Each file's bytes
// are checked against its manifest (size, SHA-256) and its path against the workspace's rules before anything
// is written, and each file is replaced atomically (a temporary file renamed over it).
func (s *Syncer) Export(ctx context.Context) (ExportReport, error) {
	o := s.opts
	state, err := o.Client.Workspace(ctx, o.User, o.Agent)
	if err != nil {
		return ExportReport{}, fmt.Errorf("read workspace index: %w", err)
	}
	contents := make([]string, len(state.Files))
	for i, f := range state.Files {
		if err := apiv1.ValidateWorkspacePath(f.Path); err != nil {
			return ExportReport{}, fmt.Errorf("%w: the server names %v", ErrMismatch, err)
		}
		got, err := o.Client.WorkspaceLines(ctx, o.User, apiv1.WorkspaceLinesRequest{AgentID: o.Agent, RelPath: f.Path})
		if err != nil {
			return ExportReport{}, fmt.Errorf("read %s: %w", f.Path, err)
		}
		if len(got.Text) != f.Size || hashHex(got.Text) != f.SHA256 {
			return ExportReport{}, fmt.Errorf("%w: %s", ErrMismatch, f.Path)
		}
		contents[i] = got.Text
	}
	var rep ExportReport
	for i, f := range state.Files {
		if err := writeAtomic(filepath.Join(o.Dir, filepath.FromSlash(f.Path)), contents[i]); err != nil {
			return rep, err
		}
		o.Progress(fmt.Sprintf("wrote %s (%d bytes)", f.Path, f.Size))
		rep.Files, rep.Bytes = append(rep.Files, f.Path), rep.Bytes+f.Size
	}
	return rep, nil
}

// writeAtomic replaces path with content: a reader sees the old file or the new one, never a part.
func writeAtomic(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".export-*")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	_, err = tmp.WriteString(content)
	if err == nil {
		err = tmp.Chmod(0o644) // as a file an editor makes, not CreateTemp's 0600
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("export %s: %w", path, err)
	}
	return nil
}
