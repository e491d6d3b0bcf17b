package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/memcluster/memcluster/apiv1"
)

// DefaultDebounce is how long the files must stay quiet before a watch syncs (the reference's 1.5 s).
const DefaultDebounce = 1500 * time.Millisecond

// Watch syncs once, then again after every burst of changes to MEMORY.md or memory/*.md that stays quiet for
// Options.Debounce, until ctx ends. Each sync's outcome goes to report; a failed sync is reported and the
// watch goes on (the next change retries it). It returns nil when ctx ends, or an error if it cannot watch.
func (s *Syncer) Watch(ctx context.Context, report func(Report, error)) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	defer w.Close()
	daily := filepath.Join(s.opts.Dir, apiv1.WorkspaceDailyDir)
	if err := w.Add(s.opts.Dir); err != nil {
		return fmt.Errorf("watch %s: %w", s.opts.Dir, err)
	}
	if err := w.Add(daily); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("watch %s: %w", daily, err)
	}
	report(s.Sync(ctx))
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if ev.Name == daily && ev.Has(fsnotify.Create) {
				_ = w.Add(daily) // memory/ made after the watch began; a failure shows up as a missed change
			}
			if s.relevant(ev.Name) {
				timer.Reset(s.opts.Debounce)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			report(Report{}, fmt.Errorf("watch: %w", err))
		case <-timer.C:
			report(s.Sync(ctx))
		}
	}
}

// relevant reports whether a changed name can change the workspace.
func (s *Syncer) relevant(name string) bool {
	rel, err := filepath.Rel(s.opts.Dir, name)
	if err != nil {
		return false
	}
	rel = filepath.ToSlash(rel)
	return rel == apiv1.WorkspaceMemoryFile || rel == apiv1.WorkspaceDailyDir ||
		(strings.HasPrefix(rel, apiv1.WorkspaceDailyDir+"/") && strings.HasSuffix(rel, ".md"))
}
