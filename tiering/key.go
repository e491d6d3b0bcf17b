package tiering

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Segment keys, version 1:
//
//	v1/<shard>/<user>/<partition>/<from>-<to>-<id>.seg
//
// <user> is the escaped user id; <partition> is the class ("episodic", "semantic", "perceptual") and, for a
// perceptual segment with a signal, "." and the escaped signal; <from> and <to> are the items' time range in
// UTC (20060102T150405Z); <id> is the segment's checksum in hex, so a key names exactly one content and an
// upload retried after a leader change either writes the same bytes or a different key.
//
// Escaping keeps [a-z0-9-] and writes every other byte as "_" and two lower-case hex digits, so an escaped
// id has no '/', no '.', no upper case (case-insensitive file systems cannot merge two users), and two users
// never share a prefix: every user's keys sit under "v1/<shard>/<user>/" with the trailing slash. The empty
// string escapes to "_", which no other input produces. An escaped form longer than maxComponent is cut and
// followed by "~" and 128 bits of the SHA-256 of the input, so a path element stays under the 255 bytes file
// systems allow and the key under S3's 1024.
const (
	keyVersion   = "v1"
	maxComponent = 120
	keepOnCut    = 80
	keyTimeFmt   = "20060102T150405Z"
)

// SegmentKey returns the store key of a segment of meta on shard, named id (normally SegmentID of its bytes).
func SegmentKey(shard uint32, meta SegmentMeta, id string) string {
	part := Escape(string(meta.Class))
	if meta.Signal != "" {
		part += "." + Escape(meta.Signal)
	}
	return fmt.Sprintf("%s%s/%s-%s-%s.seg", UserPrefix(shard, meta.UserID), part,
		keyTime(meta.From), keyTime(meta.To), Escape(id))
}

// SegmentID is the id part of a segment's key: its checksum in hex.
func SegmentID(seg []byte) string { return fmt.Sprintf("%016x", Checksum(seg)) }

// ShardPrefix is the prefix of every segment key of shard.
func ShardPrefix(shard uint32) string {
	return keyVersion + "/" + strconv.FormatUint(uint64(shard), 10) + "/"
}

// UserPrefix is the prefix of every segment key of user on shard, and of no other user's.
func UserPrefix(shard uint32, user string) string { return ShardPrefix(shard) + Escape(user) + "/" }

// Escape maps s to a non-empty string of [a-z0-9_~-] that is safe as one element of a key or a path on any
// file system or object store; distinct inputs give distinct outputs.
func Escape(s string) string {
	if s == "" {
		return "_"
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('_')
		b.WriteString(hex.EncodeToString([]byte{c}))
	}
	out := b.String()
	if len(out) <= maxComponent {
		return out
	}
	cut := keepOnCut
	if i := strings.LastIndexByte(out[:cut], '_'); i > cut-3 {
		cut = i // do not split an escape
	}
	sum := sha256.Sum256([]byte(s))
	return out[:cut] + "~" + hex.EncodeToString(sum[:16])
}

// ValidKey checks a store key: 1 to 1024 bytes of [A-Za-z0-9._~-] in '/'-separated elements, none empty,
// "." or "..", not ending in ".tmp". Every key SegmentKey returns is valid; stores refuse others with ErrBadKey, so each backend
// sees the same keys and none of them escapes or rewrites one.
func ValidKey(key string) error {
	if key == "" || len(key) > 1024 {
		return fmt.Errorf("%w: %q: length %d (want 1 to 1024)", ErrBadKey, key, len(key))
	}
	if strings.HasSuffix(key, ".tmp") {
		return fmt.Errorf("%w: %q: the .tmp suffix is reserved for temporary files", ErrBadKey, key)
	}
	for _, el := range strings.Split(key, "/") {
		if el == "" || el == "." || el == ".." {
			return fmt.Errorf("%w: %q: empty, . or .. element", ErrBadKey, key)
		}
	}
	return validChars(key)
}

// ValidPrefix checks a List prefix: empty, or a valid key, or a valid key followed by '/'.
func ValidPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if err := ValidKey(strings.TrimSuffix(prefix, "/")); err != nil {
		return fmt.Errorf("prefix: %w", err)
	}
	return nil
}

func validChars(key string) error {
	for i := 0; i < len(key); i++ {
		c := key[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._~-/", c) >= 0
		if !ok {
			return fmt.Errorf("%w: %q: byte %q at %d", ErrBadKey, key, c, i)
		}
	}
	return nil
}

// keyTime formats t as it appears in a key.
func keyTime(t time.Time) string { return t.UTC().Format(keyTimeFmt) }
