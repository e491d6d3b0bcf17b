package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/memcluster/memcluster/apiv1"
)

// localFile is one workspace file as read from disk.
type localFile struct {
	Path    string // slash-separated, relative to the workspace
	Content string
	SHA256  string
}

// scan reads MEMORY.md and memory/*.md under dir, sorted by path. Every file is checked before anything is
// sent, so a bad file stops the sync before it changes the index.
func scan(dir string) ([]localFile, error) {
	paths := []string{apiv1.WorkspaceMemoryFile}
	daily, err := os.ReadDir(filepath.Join(dir, apiv1.WorkspaceDailyDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", apiv1.WorkspaceDailyDir, err)
	}
	for _, d := range daily {
		if strings.HasSuffix(d.Name(), ".md") && !d.IsDir() {
			paths = append(paths, apiv1.WorkspaceDailyDir+"/"+d.Name())
		}
	}
	sort.Strings(paths)
	var out []localFile
	for _, p := range paths {
		if apiv1.ValidateWorkspacePath(p) != nil {
			continue // a name the API would refuse (".x.md", say) is not part of the workspace
		}
		f, ok, err := readFile(dir, p)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// readFile reads one workspace file; ok is false when it does not exist.
func readFile(dir, p string) (localFile, bool, error) {
	full := filepath.Join(dir, filepath.FromSlash(p))
	st, err := os.Stat(full)
	if errors.Is(err, fs.ErrNotExist) {
		return localFile{}, false, nil
	}
	if err != nil {
		return localFile{}, false, fmt.Errorf("%w %s: %v", ErrBadFile, p, err)
	}
	switch {
	case !st.Mode().IsRegular():
		return localFile{}, false, fmt.Errorf("%w %s: not a regular file", ErrBadFile, p)
	case st.Size() > apiv1.MaxWorkspaceFileBytes:
		return localFile{}, false, fmt.Errorf("%w %s: %d bytes, more than %d", ErrBadFile, p, st.Size(), apiv1.MaxWorkspaceFileBytes)
	}
	b, err := os.ReadFile(full)
	if err != nil {
		return localFile{}, false, fmt.Errorf("%w %s: %v", ErrBadFile, p, err)
	}
	if !utf8.Valid(b) {
		return localFile{}, false, fmt.Errorf("%w %s: not valid UTF-8", ErrBadFile, p)
	}
	return localFile{Path: p, Content: string(b), SHA256: hashHex(string(b))}, true, nil
}
