package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/memcluster/memcluster/backup"
)

// backupProgress shows a transfer: a progress bar on a terminal, one JSON line per part with -o json, nothing
// otherwise (a script reads the summary).
type backupProgress struct {
	mu    sync.Mutex
	verb  string
	bar   *progressbar.ProgressBar
	json  *json.Encoder
	parts int
	start time.Time
}

func newBackupProgress(g *globals, out, errw io.Writer, verb string, total int64) *backupProgress {
	p := &backupProgress{verb: verb, start: time.Now()}
	if g.json() {
		p.json = json.NewEncoder(out)
		return p
	}
	if f, ok := errw.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(errw), progressbar.OptionShowBytes(true),
			progressbar.OptionSetDescription(verb), progressbar.OptionShowCount(), progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(errw) }), progressbar.OptionSetWidth(30))
	}
	return p
}

// Write counts bytes for the bar.
func (p *backupProgress) Write(b []byte) (int, error) {
	if p.bar != nil {
		_ = p.bar.Add(len(b))
	}
	return len(b), nil
}

// part reports a checked part.
func (p *backupProgress) part(m backup.Manifest, h backup.PartHeader, e backup.PartEnd) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.parts++
	if p.bar != nil && h.Kind == backup.KindShard {
		p.bar.Describe(fmt.Sprintf("%s shard %d/%d", p.verb, h.Shard+1, len(m.Shards)))
	}
	if p.json != nil {
		_ = p.json.Encode(map[string]any{"event": "part", "kind": h.Kind, "shard": h.Shard, "key": h.Key,
			"shards": len(m.Shards), "bytes": e.Bytes, "memories": e.Memories, "elapsed_seconds": time.Since(p.start).Seconds()})
	}
}

func (p *backupProgress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

// backupSummary is what create, restore and verify print at the end.
type backupSummary struct {
	Event    string  `json:"event"`
	File     string  `json:"file"`
	Bytes    int64   `json:"bytes"`
	Memories uint64  `json:"memories"`
	Shards   int     `json:"shards"`
	Cold     int     `json:"cold_objects"`
	Seconds  float64 `json:"seconds"`
	MBps     float64 `json:"mb_per_second"`
	SHA256   string  `json:"sha256,omitempty"`
}

func (p *backupProgress) summary(event, file string, bytes int64, memories uint64, shards, cold int) backupSummary {
	secs := time.Since(p.start).Seconds()
	return backupSummary{Event: event, File: file, Bytes: bytes, Memories: memories, Shards: shards, Cold: cold,
		Seconds: secs, MBps: float64(bytes) / 1e6 / max(secs, 1e-9)}
}

func printBackupSummary(g *globals, w io.Writer, s backupSummary) error {
	if g.json() {
		return json.NewEncoder(w).Encode(s)
	}
	_, err := fmt.Fprintf(w, "%s %s: %d bytes, %d memories, %d shards, %d cold segments in %.1fs (%.1f MB/s)\n",
		s.Event, s.File, s.Bytes, s.Memories, s.Shards, s.Cold, s.Seconds, s.MBps)
	return err
}
