package raftstore

import "encoding/binary"

// Key layout under the caller's prefix P:
//
//	P 'l' <uint64 big-endian index>  log entry
//	P 's' <key>                       stable value
//
// Big-endian indexes sort numerically, so the first and last entries are
// one seek away and a contiguous index range is one Pebble key range.
const (
	logTag    = 'l'
	stableTag = 's'
	// logTagEnd is the byte after logTag: P+'m' bounds the log keyspace.
	logTagEnd = logTag + 1
)

type keys struct {
	logLo  []byte // P 'l': inclusive lower bound of the log keyspace
	logHi  []byte // P 'm': exclusive upper bound of the log keyspace
	stable []byte // P 's'
}

func newKeys(prefix []byte) keys {
	withTag := func(tag byte) []byte {
		k := make([]byte, len(prefix)+1)
		copy(k, prefix)
		k[len(prefix)] = tag
		return k
	}
	return keys{logLo: withTag(logTag), logHi: withTag(logTagEnd), stable: withTag(stableTag)}
}

func (k keys) logKey(index uint64) []byte {
	b := make([]byte, k.logKeyLen())
	k.putLogKey(b, index)
	return b
}

// logKeyLen is the length of every log key.
func (k keys) logKeyLen() int { return len(k.logLo) + 8 }

// putLogKey writes index's log key into b, of logKeyLen bytes.
func (k keys) putLogKey(b []byte, index uint64) {
	copy(b, k.logLo)
	binary.BigEndian.PutUint64(b[len(k.logLo):], index)
}

// logIndex parses a key found by iterating the log keyspace. A key of the
// wrong length means another store's keys overlap ours (prefixes that are
// not prefix-free), which must be reported rather than misread.
func (k keys) logIndex(key []byte) (uint64, bool) {
	if len(key) != len(k.logLo)+8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(key[len(k.logLo):]), true
}

func (k keys) stableKey(key []byte) []byte {
	b := make([]byte, len(k.stable)+len(key))
	copy(b, k.stable)
	copy(b[len(k.stable):], key)
	return b
}
