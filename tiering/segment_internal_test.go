package tiering

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"

	"github.com/memcluster/memcluster/memory"
)

// seal builds a segment around any payload, with a valid checksum: what a hostile or buggy writer could
// produce. rawLen is what the header claims the payload inflates to.
func seal(meta SegmentMeta, rawLen int, compressed []byte) []byte {
	out := append([]byte(segmentMagic), segmentVersion)
	hdr := encodeHeader(meta, rawLen)
	out = binary.AppendUvarint(out, uint64(len(hdr)))
	out = append(out, hdr...)
	out = append(out, compressed...)
	return binary.LittleEndian.AppendUint64(out, xxhash.Sum64(out))
}

// reseal replaces the trailing checksum of b with the right one, so a fuzzer's mutations reach the
// decoder behind the checksum.
func reseal(b []byte) []byte {
	if len(b) < checksumLen {
		return b
	}
	out := append([]byte(nil), b[:len(b)-checksumLen]...)
	return binary.LittleEndian.AppendUint64(out, xxhash.Sum64(out))
}

func bombMeta() SegmentMeta {
	t := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	return SegmentMeta{UserID: "u", Class: ClassEpisodic, Type: memory.Episodic, From: t, To: t, Count: 1}
}

func zeros(n int) []byte {
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(false))
	return enc.EncodeAll(make([]byte, n), nil)
}

// A payload that inflates past what its header claims stops at the claim: the decoder never holds more
// than the header's (limited) length.
func TestDecompressionBomb(t *testing.T) {
	big := zeros(64 << 20) // 64 MiB of zeros compress to a few KiB
	if len(big) > 64<<10 {
		t.Fatalf("bomb is %d bytes", len(big))
	}
	cases := map[string]struct {
		seg  []byte
		want error
	}{
		"claims 1 KiB":              {seal(bombMeta(), 1<<10, big), ErrCorrupt},
		"claims more than allowed":  {seal(bombMeta(), 512<<20, big), ErrTooLarge},
		"claims more than it holds": {seal(bombMeta(), 1<<20, zeros(10)), ErrCorrupt},
		"not zstd":                  {seal(bombMeta(), 10, []byte("plain text")), ErrCorrupt},
	}
	for name, c := range cases {
		if _, _, err := DecodeWithLimits(c.seg, DecodeLimits{MaxRawBytes: 32 << 20}); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
}

// A header that claims many items is refused before any allocation for them.
func TestHeaderClaimsTooManyItems(t *testing.T) {
	m := bombMeta()
	m.Count = 1 << 30
	if _, _, err := Decode(seal(m, 10, zeros(10))); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("%v, want ErrTooLarge", err)
	}
	m.Count = 0
	if _, _, err := Decode(seal(m, 10, zeros(10))); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("empty segment: %v, want ErrCorrupt", err)
	}
}
