package storage

import (
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
)

// compressions are the names Options.Compression takes, the default first: "last-level" compresses with
// snappy only the last level's tables, where a DB's bytes come to rest, and leaves uncompressed the tables that
// flushes and the compactions above write and rewrite within minutes.
var compressions = [...]string{"last-level", "none", "snappy"}

// Compressions returns the names Options.Compression takes, the default first.
func Compressions() []string { return slices.Clone(compressions[:]) }

// DefaultCompression is Options.Compression's default.
const DefaultCompression = "last-level"

// compressionProfile is the block compression Pebble writes tables with. Tables written under another setting
// stay readable: every block records its own compression.
func compressionProfile(name string) (*sstable.CompressionProfile, error) {
	switch name {
	case "last-level", "none":
		return sstable.NoCompression, nil
	case "snappy":
		return sstable.SnappyCompression, nil
	}
	return nil, fmt.Errorf("%w %q: want one of %v", ErrCompression, name, compressions)
}

// setCompression sets the profile of every level's tables, and under "last-level" snappy for the last one.
func setCompression(po *pebble.Options, name string, p *sstable.CompressionProfile) {
	for i := range po.Levels {
		level := p
		if name == "last-level" && i == len(po.Levels)-1 {
			level = sstable.SnappyCompression
		}
		po.Levels[i].Compression = func() *sstable.CompressionProfile { return level }
	}
}

// ValidCompression reports whether name is one of Compressions().
func ValidCompression(name string) bool { return slices.Contains(compressions[:], name) }
