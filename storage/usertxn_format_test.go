package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/memcluster/memcluster/memory"
)

// flushTxn is a user transaction shaped like a flush's: the session with its 20 messages, facts, history events
// and episodes.
func flushTxn() UserTxnPayload {
	var msgs []string
	for i := range 20 {
		msgs = append(msgs, fmt.Sprintf(`{"id":"m%02d","role":"user","content":"I really like green tea, and I live in `+
			`Lisbon now; please book a morning flight for Friday.","time":"2026-11-30T09:%02d:00Z"}`, i, i))
	}
	p := UserTxnPayload{UserID: "bench-user-0042", ExpectRev: 17, Deletes: []string{"E0001", "E0002"},
		Puts: []memory.Memory{mem("bench-user-0042", "E0100", "an episode")}}
	p.Side = append(p.Side, SideKV{Space: SpaceSessions, Key: "run-1",
		Value: json.RawMessage(`{"messages":[` + strings.Join(msgs, ",") + `],"summary":"tea, Lisbon"}`)})
	for i := range 6 {
		p.Side = append(p.Side, SideKV{Space: SpaceFacts, Key: fmt.Sprintf("F%03d", i),
			Value: json.RawMessage(`{"statement":"user lives in Lisbon","confidence":0.8,"source":"m04"}`)},
			SideKV{Space: SpaceHistory, Key: fmt.Sprintf("H%03d", i),
				Value: json.RawMessage(`{"op":"UPDATE","fact":"F001"}`)})
	}
	p.Side = append(p.Side, SideKV{Space: SpaceFacts, Key: "F-gone"}) // a delete
	return p
}

// Both command formats carry the same transaction (of valid UTF-8 strings, which JSON keeps as they are): decoded,
// the payloads are equal, an empty value included (it deletes, as in the JSON header, where it is left out).
func TestUserTxnFormatsCarryTheSameTransaction(t *testing.T) {
	cases := []UserTxnPayload{flushTxn(), {UserID: "u"}, {UserID: "u", ExpectRev: 1 << 40, Deletes: []string{"a"}},
		{UserID: "u", Side: []SideKV{{Space: SpaceSamples, Key: "sig\x00t", Value: json.RawMessage{}}}}}
	for i, p := range cases {
		var got [2]UserTxnPayload
		for j, cf := range commandFormats {
			b, err := Encoder{Records: RecordNewest, Commands: cf}.UserTxn(p)
			if err != nil {
				t.Fatal(err)
			}
			if b[0] != byte(cf) {
				t.Fatalf("case %d: format byte %d, want %d", i, b[0], cf)
			}
			c, err := DecodeCommand(b)
			if err != nil || c.Type != CmdUserTxn {
				t.Fatalf("case %d format %d: %v", i, cf, err)
			}
			got[j] = c.UserTxn
		}
		if !reflect.DeepEqual(got[0], got[1]) {
			t.Fatalf("case %d: the formats differ:\n%+v\n%+v", i, got[0], got[1])
		}
	}
	b, _ := Encoder{Commands: CommandBinary}.Update(flushTxn())
	if c, err := DecodeCommand(b); err != nil || c.Type != CmdUpdate || len(c.UserTxn.Side) != len(flushTxn().Side) {
		t.Fatalf("update in the binary format: %v", err)
	}
}

// A binary header cut short, with a bad flag, or with bytes after it does not decode; a value that is not JSON
// is refused when encoding, as the JSON header refuses it.
func TestUserTxnBinaryHeaderRefusesDamage(t *testing.T) {
	p := flushTxn()
	p.Puts = nil
	hdr := appendTxnHeader(nil, p)
	for n := 0; n < len(hdr); n++ {
		if _, err := decodeTxnHeader(hdr[:n]); err == nil {
			t.Fatalf("a header cut at %d of %d bytes decoded", n, len(hdr))
		}
	}
	if _, err := decodeTxnHeader(append(hdr, 0)); err == nil {
		t.Fatal("a header with a byte after it decoded")
	}
	bad := appendTxnHeader(nil, UserTxnPayload{UserID: "u", Side: []SideKV{{Space: SpaceFacts, Key: "k"}}})
	bad[len(bad)-1] = 2 // the present flag
	if _, err := decodeTxnHeader(bad); err == nil {
		t.Fatal("a present flag of 2 decoded")
	}
	bad = append(bad[:len(bad)-1], 1, 0) // present, of length 0: only a delete is empty
	if _, err := decodeTxnHeader(bad); err == nil {
		t.Fatal("a present empty value decoded")
	}
	_, err := Encoder{Commands: CommandBinary}.UserTxn(UserTxnPayload{UserID: "u",
		Side: []SideKV{{Space: SpaceFacts, Key: "k", Value: json.RawMessage(`{"open":`)}}})
	if err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Fatalf("a value that is not JSON: %v", err)
	}
	for _, v := range []byte{0, byte(CommandNewest) + 1} {
		b, _ := Encoder{Commands: CommandBinary}.UserTxn(UserTxnPayload{UserID: "u"})
		b[0] = v
		if _, err := DecodeCommand(b); !errors.Is(err, ErrUnknownCommand) {
			t.Fatalf("format byte %d: %v", v, err)
		}
	}
}

// The binary header is written into a buffer sized by txnHeaderLen: the length must be exact, at varints'
// boundaries and with empty values (deletes) too.
func TestTxnHeaderLenIsExact(t *testing.T) {
	long := UserTxnPayload{UserID: strings.Repeat("u", 200), ExpectRev: 1<<64 - 1,
		Deletes: []string{strings.Repeat("d", 127), strings.Repeat("d", 128), ""}}
	long.Side = []SideKV{
		{Space: SpaceFacts, Key: strings.Repeat("k", 16384), Value: json.RawMessage(strings.Repeat("1", 127))},
		{Space: SpaceSessions, Key: "", Value: json.RawMessage(strings.Repeat("2", 16384))},
		{Space: SpaceFacts, Key: "gone"},
	}
	for i, p := range []UserTxnPayload{flushTxn(), {}, {UserID: "u", ExpectRev: 127}, {ExpectRev: 128}, long} {
		if got, want := txnHeaderLen(p), len(appendTxnHeader(nil, p)); got != want {
			t.Fatalf("case %d: txnHeaderLen %d, header %d bytes", i, got, want)
		}
	}
}

// BenchmarkDecodeUserTxn is what every replica spends decoding a flush's transaction, in each format.
func BenchmarkDecodeUserTxn(b *testing.B) {
	for _, cf := range commandFormats {
		data, err := Encoder{Records: RecordNewest, Commands: cf}.UserTxn(flushTxn())
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprint("format=", cf), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				if _, err := DecodeCommand(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncodeUserTxn is what a coordinator spends encoding a flush's transaction, in each format.
func BenchmarkEncodeUserTxn(b *testing.B) {
	p := flushTxn()
	for _, cf := range commandFormats {
		enc := Encoder{Records: RecordNewest, Commands: cf}
		b.Run(fmt.Sprint("format=", cf), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := enc.UserTxn(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
