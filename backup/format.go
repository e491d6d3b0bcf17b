package backup

import (
	"time"

	"github.com/memcluster/memcluster/internal/formats"

	"github.com/memcluster/memcluster/shardmap"
)

// File layout, version 1 (DESIGN.md says why):
//
//	"MCBACKUP" [version u8]
//	'M' [u32 len] manifest JSON
//	repeated: 'P' [u32 len] part header JSON, chunks [u32 n][n bytes]…, [u32 0], [u32 len] part end JSON
//	'T' [u32 len] trailer JSON (Summary, with the SHA-256 of every byte up to and including the 'T')
//	[u32 crc32c of the trailer JSON] [u32 len of the trailer JSON] "MCBKEND1"
//
// Every length is big-endian. The fixed footer lets a lister read the summary from the end of a blob.
const (
	// Version is the format version this build writes and reads.
	Version = formats.Backup

	magic       = "MCBACKUP"
	footerMagic = "MCBKEND1"
	footerSize  = 4 + 4 + len(footerMagic)

	recManifest = 'M'
	recPart     = 'P'
	recTrailer  = 'T'

	// maxChunk bounds one chunk (the writer makes 1 MiB ones); maxJSON one JSON record. A corrupt length then
	// fails instead of allocating what it claims.
	maxChunk = 4 << 20
	maxJSON  = 64 << 20
	// writeChunk is the chunk size the writer emits.
	writeChunk = 1 << 20
)

// Part kinds.
const (
	KindShard   = "shard"    // one shard's state stream (storage's snapshot format) at a read barrier
	KindCold    = "cold"     // one cold segment of the external store, its bytes
	KindColdRef = "cold_ref" // one cold segment of the external store, referenced: no bytes, its checksum
)

// Cold segment modes of a backup.
const (
	ColdNone       = "none"       // no external store: segments live in the shards
	ColdIncluded   = "included"   // segments of the external store are parts of the file
	ColdReferenced = "referenced" // only their keys and checksums are
)

// Manifest is the first record: what the cluster was when the backup started.
type Manifest struct {
	Version    int               `json:"version"`
	Created    time.Time         `json:"created"`
	Node       string            `json:"node"` // the node that wrote it
	Buckets    int               `json:"buckets"`
	Shards     []Shard           `json:"shards"`
	MapVersion uint64            `json:"map_version"`
	Members    []Member          `json:"members"`
	Formats    map[string]any    `json:"formats"` // internal/formats at write time
	Cold       string            `json:"cold"`
	Extra      map[string]string `json:"extra,omitempty"`
}

// Shard is one shard of the map: its id and the hash range it owns.
type Shard struct {
	ID    uint32         `json:"id"`
	Range shardmap.Range `json:"range"`
}

// Member is a node of the cluster at backup time.
type Member struct {
	ID       string `json:"id"`
	HTTPAddr string `json:"http_addr"`
	RaftAddr string `json:"raft_addr"`
	Zone     string `json:"zone,omitempty"`
	State    string `json:"state,omitempty"`
}

// PartHeader opens a part.
type PartHeader struct {
	Kind  string `json:"kind"`
	Shard uint32 `json:"shard,omitempty"`
	Key   string `json:"key,omitempty"` // cold segments: the object key
	// Cold references: the referenced object's size and SHA-256 (hex).
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}

// PartEnd closes a part: what was in it.
type PartEnd struct {
	Bytes    int64  `json:"bytes"`
	SHA256   string `json:"sha256"`
	Records  uint64 `json:"records,omitempty"`
	Memories uint64 `json:"memories,omitempty"`
	// Index is the raft applied index a shard stream reflects (a restore installs it at or above this index).
	Index uint64 `json:"index,omitempty"`
}

// Summary is the trailer: totals and the checksum of the whole file before it.
type Summary struct {
	Finished    time.Time `json:"finished"`
	Parts       int       `json:"parts"`
	Shards      int       `json:"shards"`
	ColdObjects int       `json:"cold_objects"`
	Records     uint64    `json:"records"`
	Memories    uint64    `json:"memories"`
	Bytes       int64     `json:"bytes"` // payload bytes of every part
	SHA256      string    `json:"sha256"`
}
