// Package buildinfo says what a memnode or memctl binary is: its version, the commit it was built from, and the
// version of every data format it reads and writes. Both commands print it (`memnode --version`,
// `memctl version`).
package buildinfo

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/memcluster/memcluster/internal/formats"
)

// Version is set at link time: go build -ldflags "-X github.com/memcluster/memcluster/internal/buildinfo.Version=v0.1.0"
// (`make build VERSION=v0.1.0`). A plain go build says "dev".
var Version = "dev"

// Commit may be set at link time too (the Makefile does); the commit Go stamps from VCS (vcs.revision) wins
// when the build has one, which -buildvcs=false builds do not.
var Commit = ""

// Format is one data format: the version this build writes and the versions it reads.
type Format struct {
	Name   string `json:"name"`
	Writes string `json:"writes"`
	Reads  string `json:"reads"`
}

// Info is what a binary reports about itself.
type Info struct {
	Version  string   `json:"version"`
	Commit   string   `json:"commit"`             // vcs.revision, "" when the build had no VCS information
	Modified bool     `json:"modified,omitempty"` // built from a work tree with uncommitted changes
	Go       string   `json:"go"`
	Formats  []Format `json:"formats"`
}

// Get returns the running binary's build information.
func Get() Info {
	in := Info{Version: Version, Commit: Commit, Go: runtime.Version(), Formats: Formats()}
	if in.Version == "" {
		in.Version = "dev"
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				in.Commit = s.Value
			case "vcs.modified":
				in.Modified = s.Value == "true"
			}
		}
	}
	return in
}

// Formats lists every data format of this build, in a fixed order.
func Formats() []Format {
	one := func(name string, v any) Format {
		s := fmt.Sprint(v)
		return Format{Name: name, Writes: s, Reads: s}
	}
	return []Format{
		one("storage_keys", formats.Keys),
		{Name: "memory_record", Writes: fmt.Sprint(formats.Record),
			Reads: fmt.Sprintf("%d-%d", formats.RecordOldest, formats.Record)},
		{Name: "raft_command", Writes: fmt.Sprint(formats.Command),
			Reads: fmt.Sprintf("%d-%d", formats.CommandOldest, formats.Command)},
		one("shard_snapshot", formats.Snapshot),
		{Name: "meta_state", Writes: fmt.Sprint(formats.Meta), Reads: fmt.Sprintf("%d-%d", formats.MetaOldest, formats.Meta)},
		one("cold_segment", formats.Segment),
		one("backup_file", formats.Backup),
		one("fulltext_mapping", formats.FulltextMapping),
		{Name: "vector_checkpoint", Writes: fmt.Sprint(formats.VectorCheckpoint),
			Reads: fmt.Sprintf("%d-%d", formats.VectorCheckpointOldest, formats.VectorCheckpoint)},
		one("export", formats.Export),
		{Name: "dropped_marker", Writes: fmt.Sprint(formats.DroppedMarker),
			Reads: fmt.Sprintf("%d-%d", formats.DroppedMarkerOldest, formats.DroppedMarker)},
	}
}

// Write prints in as text: "<program> version: <version>", the commit, the Go version, then one line per format.
func Write(w io.Writer, program string, in Info) error {
	commit := in.Commit
	if commit == "" {
		commit = "unknown"
	}
	if in.Modified {
		commit += " (modified)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s version: %s\ncommit: %s\ngo version: %s\ndata formats:\n", program, in.Version, commit, in.Go)
	for _, f := range in.Formats {
		if f.Reads == f.Writes {
			fmt.Fprintf(&b, "  %-18s %s\n", f.Name, f.Writes)
		} else {
			fmt.Fprintf(&b, "  %-18s %s (reads %s)\n", f.Name, f.Writes, f.Reads)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
