package storage

import (
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
)

// The names Options.Compression takes.
const (
	// CompressLastLevel compresses with snappy the tables compactions write into the last level, where a DB's
	// bytes come to rest, and leaves uncompressed the tables flushes and the compactions above write.
	CompressLastLevel = "last-level"
	// CompressNone writes every table uncompressed.
	CompressNone = "none"
	// CompressSnappy compresses every table with snappy (Pebble's default).
	CompressSnappy = "snappy"
	// DefaultCompression is Options.Compression's default.
	DefaultCompression = CompressLastLevel
)

// Compressions returns the names Options.Compression takes, the default first.
func Compressions() []string { return []string{DefaultCompression, CompressNone, CompressSnappy} }

// levelProfiles holds a compression for each of Pebble's levels.
type levelProfiles = [len(pebble.Options{}.Levels)]*sstable.CompressionProfile

// levelCompressions is the block compression of each level's tables under name. Tables written under another
// setting stay readable (every block records its own compression); a compaction that rewrites one writes it
// under the current setting, but a table a compaction moves to a lower level whole keeps its own.
func levelCompressions(name string) (levels levelProfiles, err error) {
	all := sstable.NoCompression
	switch name {
	case CompressLastLevel, CompressNone:
	case CompressSnappy:
		all = sstable.SnappyCompression
	default:
		return levels, fmt.Errorf("%w %q: want one of %s", ErrCompression, name, strings.Join(Compressions(), ", "))
	}
	for i := range levels {
		levels[i] = all
	}
	if name == CompressLastLevel {
		levels[len(levels)-1] = sstable.SnappyCompression
	}
	return levels, nil
}

// setCompression installs the levels' compressions.
func setCompression(po *pebble.Options, levels levelProfiles) {
	for i, p := range levels {
		po.Levels[i].Compression = func() *sstable.CompressionProfile { return p }
	}
}

// ValidCompression reports whether name is one of Compressions().
func ValidCompression(name string) bool {
	_, err := levelCompressions(name)
	return err == nil
}
