package shardmap

import (
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
)

// Sentinel errors.
var (
	// ErrUnsplittable is returned for a range of a single position.
	ErrUnsplittable = errors.New("range cannot be split further")
	// ErrBadMap is returned for a map whose ranges do not tile every bucket exactly once.
	ErrBadMap = errors.New("malformed shard map")
)

// A user id hashes (FNV-1a 64) to h. Its bucket is h mod B, where B is the shard count the cluster formed with,
// and its position inside the bucket is mix(h). A cluster that never split routes every user to shard h mod B,
// exactly as the fixed-modulo layout did, so a data directory written before ranges existed needs no migration.
//
// Why the mix: FNV-1a's high bits hardly depend on a string's last bytes, so ids that differ only at the end
// ("user-001", "user-002") would land on one side of every split point. MurmurHash3's finalizer spreads them.

// Hash is the user-hash of id.
func Hash(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}

// Point is where a user falls: its bucket and its position inside the bucket.
type Point struct {
	Bucket uint32
	Pos    uint64
}

// Locate returns id's point in a space of buckets buckets.
func Locate(id string, buckets uint32) Point {
	h := Hash(id)
	return Point{Bucket: uint32(h % uint64(buckets)), Pos: mix(h)}
}

// mix is MurmurHash3's 64-bit finalizer: a bijection that lets every input bit reach every output bit.
func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// Range is the part of the hash space a shard owns: positions First..Last (inclusive) of one bucket.
type Range struct {
	Bucket uint32 `json:"bucket"`
	First  uint64 `json:"first"`
	Last   uint64 `json:"last"`
}

// Whole is the range of an entire bucket.
func Whole(bucket uint32) Range { return Range{Bucket: bucket, First: 0, Last: ^uint64(0)} }

// Contains reports whether p falls in r.
func (r Range) Contains(p Point) bool {
	return p.Bucket == r.Bucket && p.Pos >= r.First && p.Pos <= r.Last
}

// Split halves r: lower keeps the first half, upper takes the rest.
func (r Range) Split() (lower, upper Range, err error) {
	if r.First == r.Last {
		return r, r, fmt.Errorf("%w: %v", ErrUnsplittable, r)
	}
	mid := r.First + (r.Last-r.First)/2
	return Range{r.Bucket, r.First, mid}, Range{r.Bucket, mid + 1, r.Last}, nil
}

// Fraction is the share of its bucket that r covers, for display.
func (r Range) Fraction() float64 {
	return (float64(r.Last-r.First) + 1) / (float64(^uint64(0)) + 1)
}

func (r Range) String() string {
	return fmt.Sprintf("b%d[%016x..%016x]", r.Bucket, r.First, r.Last)
}

// Map is the ranges of every shard, indexed by shard id, over Buckets buckets.
type Map struct {
	Buckets uint32
	Ranges  []Range
	byStart map[uint32][]entry // per bucket, sorted by First
}

type entry struct {
	first uint64
	shard uint32
}

// New builds a map and checks that its ranges tile every bucket exactly once.
func New(buckets uint32, ranges []Range) (*Map, error) {
	if buckets == 0 {
		return nil, fmt.Errorf("%w: no buckets", ErrBadMap)
	}
	m := &Map{Buckets: buckets, Ranges: ranges, byStart: map[uint32][]entry{}}
	for s, r := range ranges {
		if r.Bucket >= buckets || r.First > r.Last {
			return nil, fmt.Errorf("%w: shard %d has range %v", ErrBadMap, s, r)
		}
		m.byStart[r.Bucket] = append(m.byStart[r.Bucket], entry{r.First, uint32(s)})
	}
	for b := uint32(0); b < buckets; b++ {
		es := m.byStart[b]
		sort.Slice(es, func(i, j int) bool { return es[i].first < es[j].first })
		next, done := uint64(0), false
		for _, e := range es {
			r := ranges[e.shard]
			if done || r.First != next {
				return nil, fmt.Errorf("%w: bucket %d has a gap or overlap at shard %d", ErrBadMap, b, e.shard)
			}
			next, done = r.Last+1, r.Last == ^uint64(0)
		}
		if !done {
			return nil, fmt.Errorf("%w: bucket %d is not covered to its end", ErrBadMap, b)
		}
	}
	return m, nil
}

// Initial is the map of a cluster that formed with shards shards: shard s owns bucket s whole.
func Initial(shards uint32) []Range {
	out := make([]Range, shards)
	for s := range out {
		out[s] = Whole(uint32(s))
	}
	return out
}

// Lookup returns the shard that owns id.
func (m *Map) Lookup(id string) uint32 {
	p := Locate(id, m.Buckets)
	es := m.byStart[p.Bucket]
	i := sort.Search(len(es), func(i int) bool { return es[i].first > p.Pos }) - 1
	return es[i].shard // New guarantees a range starting at 0 in every bucket
}
