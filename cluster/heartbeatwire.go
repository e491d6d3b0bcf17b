package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/hashicorp/raft"
)

// The wire format of the heartbeat stream (heartbeats.go). Only empty AppendEntries travel on it, so a fixed
// layout of their few fields replaces raft's msgpack, which was most of the CPU of an idle node's heartbeats.
// A test (heartbeats_test.go) fails if hashicorp/raft adds fields to the request or response, which this
// encoding would otherwise drop.
//
// Frame: u32 length of the rest, u32 count, then count items.
//   request item:  u64 seq, u32 group, varint protocol version, bytes ID, bytes Addr, uvarint Term, bytes Leader,
//                  uvarint PrevLogEntry, uvarint PrevLogTerm, uvarint LeaderCommitIndex
//   response item: u64 seq, bytes error, varint protocol version, bytes ID, bytes Addr, uvarint Term,
//                  uvarint LastLog, byte flags (1 Success, 2 NoRetryBackoff)
// bytes is a uvarint length and the bytes.

// maxHeartbeatFrame bounds a frame a peer may make us read: a batch of every group's heartbeat is far smaller.
const maxHeartbeatFrame = 16 << 20

var errBadHeartbeatFrame = errors.New("malformed heartbeat frame")

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// appendHeartbeatRequest encodes an empty AppendEntries after its item header.
func appendHeartbeatRequest(b []byte, seq uint64, group uint32, r *raft.AppendEntriesRequest) []byte {
	b = binary.BigEndian.AppendUint64(b, seq)
	b = binary.BigEndian.AppendUint32(b, group)
	b = binary.AppendVarint(b, int64(r.ProtocolVersion))
	b = appendBytes(b, r.ID)
	b = appendBytes(b, r.Addr)
	b = binary.AppendUvarint(b, r.Term)
	b = appendBytes(b, r.Leader)
	b = binary.AppendUvarint(b, r.PrevLogEntry)
	b = binary.AppendUvarint(b, r.PrevLogTerm)
	return binary.AppendUvarint(b, r.LeaderCommitIndex)
}

func appendHeartbeatResponse(b []byte, seq uint64, rpcErr string, r *raft.AppendEntriesResponse) []byte {
	b = binary.BigEndian.AppendUint64(b, seq)
	b = appendBytes(b, []byte(rpcErr))
	b = binary.AppendVarint(b, int64(r.ProtocolVersion))
	b = appendBytes(b, r.ID)
	b = appendBytes(b, r.Addr)
	b = binary.AppendUvarint(b, r.Term)
	b = binary.AppendUvarint(b, r.LastLog)
	var flags byte
	if r.Success {
		flags |= 1
	}
	if r.NoRetryBackoff {
		flags |= 2
	}
	return append(b, flags)
}

// frameDecoder reads the fields of one frame; the first error sticks and later reads return zero values.
type frameDecoder struct {
	b   []byte
	err error
}

func (d *frameDecoder) fail() {
	if d.err == nil {
		d.err = errBadHeartbeatFrame
	}
	d.b = nil
}

func (d *frameDecoder) u32() uint32 {
	if len(d.b) < 4 {
		d.fail()
		return 0
	}
	v := binary.BigEndian.Uint32(d.b)
	d.b = d.b[4:]
	return v
}

func (d *frameDecoder) u64() uint64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := binary.BigEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *frameDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *frameDecoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// bytes returns a copy (nil when empty, as msgpack decodes an empty byte string) so that no item keeps the frame.
func (d *frameDecoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	if n == 0 {
		return nil
	}
	v := append([]byte(nil), d.b[:n]...)
	d.b = d.b[n:]
	return v
}

func (d *frameDecoder) byte1() byte {
	if len(d.b) < 1 {
		d.fail()
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

type heartbeatItem struct {
	seq   uint64
	group uint32
	req   raft.AppendEntriesRequest
}

func (d *frameDecoder) request() heartbeatItem {
	var it heartbeatItem
	it.seq = d.u64()
	it.group = d.u32()
	it.req.ProtocolVersion = raft.ProtocolVersion(d.varint())
	it.req.ID = d.bytes()
	it.req.Addr = d.bytes()
	it.req.Term = d.uvarint()
	it.req.Leader = d.bytes()
	it.req.PrevLogEntry = d.uvarint()
	it.req.PrevLogTerm = d.uvarint()
	it.req.LeaderCommitIndex = d.uvarint()
	return it
}

type heartbeatReply struct {
	seq  uint64
	err  string
	resp raft.AppendEntriesResponse
}

func (d *frameDecoder) response() heartbeatReply {
	var r heartbeatReply
	r.seq = d.u64()
	r.err = string(d.bytes())
	r.resp.ProtocolVersion = raft.ProtocolVersion(d.varint())
	r.resp.ID = d.bytes()
	r.resp.Addr = d.bytes()
	r.resp.Term = d.uvarint()
	r.resp.LastLog = d.uvarint()
	flags := d.byte1()
	r.resp.Success = flags&1 != 0
	r.resp.NoRetryBackoff = flags&2 != 0
	return r
}

// readFrame reads one frame into buf (grown as needed) and returns a decoder positioned after the count.
func readFrame(r io.Reader, buf *[]byte) (*frameDecoder, uint32, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, 0, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n < 4 || n > maxHeartbeatFrame {
		return nil, 0, fmt.Errorf("%w: length %d", errBadHeartbeatFrame, n)
	}
	if cap(*buf) < int(n) {
		*buf = make([]byte, n)
	}
	b := (*buf)[:n]
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, 0, err
	}
	d := &frameDecoder{b: b}
	count := d.u32()
	return d, count, d.err
}

// beginFrame starts a frame in b: room for the length, then the item count.
func beginFrame(b []byte, count int) []byte {
	b = append(b[:0], 0, 0, 0, 0)
	return binary.BigEndian.AppendUint32(b, uint32(count))
}

// endFrame fills in the length of a frame begun by beginFrame.
func endFrame(b []byte) []byte {
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}
