package tiering_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/tiering"
	"github.com/memcluster/memcluster/tiering/storetest"
)

func TestSegmentKeyFormat(t *testing.T) {
	meta := tiering.SegmentMeta{UserID: "Alice/..", Class: tiering.ClassPerceptual, Type: memory.Episodic,
		Signal: "heart_rate", From: time.Date(2024, 3, 1, 8, 0, 0, 0, time.UTC),
		To: time.Date(2024, 3, 31, 20, 15, 0, 0, time.FixedZone("CET", 3600))}
	got := tiering.SegmentKey(7, meta, "00ff00ff00ff00ff")
	want := "v1/7/_41lice_2f_2e_2e/perceptual.heart_5frate/20240301T080000Z-20240331T191500Z-00ff00ff00ff00ff.seg"
	if got != want {
		t.Fatalf("key\n got %s\nwant %s", got, want)
	}
	if !strings.HasPrefix(got, tiering.UserPrefix(7, "Alice/..")) {
		t.Fatal("key is not under its user's prefix")
	}
}

func TestEscape(t *testing.T) {
	ids := append([]string{}, storetest.OddUserIDs...)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ { // random short strings over an alphabet full of escapes and separators
		b := make([]byte, r.IntN(6))
		for j := range b {
			b[j] = "aZ_/.%~-\x00é"[r.IntN(11)]
		}
		ids = append(ids, string(b))
	}
	seen := map[string]string{}
	for _, id := range ids {
		e := tiering.Escape(id)
		if prev, dup := seen[e]; dup && prev != id {
			t.Fatalf("%q and %q both escape to %q", prev, id, e)
		}
		seen[e] = id
		if e == "" || len(e) > 120+1+32 || e == "." || e == ".." {
			t.Fatalf("%q escapes to %q", id, e)
		}
		for _, c := range []byte(e) {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '~') {
				t.Fatalf("%q escapes to %q, which has %q", id, e, c)
			}
		}
	}
}

// Long ids are cut and hashed: still distinct, still bounded, still a valid key.
func TestEscapeLong(t *testing.T) {
	a, b := strings.Repeat("ü", 128), strings.Repeat("ü", 127)+"ä"
	ea, eb := tiering.Escape(a), tiering.Escape(b)
	if ea == eb || !strings.Contains(ea, "~") || len(ea) > 120 {
		t.Fatalf("%q / %q", ea, eb)
	}
	meta := tiering.SegmentMeta{UserID: a, Class: tiering.ClassEpisodic, Type: memory.Episodic}
	if err := tiering.ValidKey(tiering.SegmentKey(4294967295, meta, "ffffffffffffffff")); err != nil {
		t.Fatal(err)
	}
}

// No user's prefix is a prefix of another user's keys, even when one id is a prefix of the other.
func TestUserPrefixIsolation(t *testing.T) {
	users := append([]string{"a", "ab", "a/b", "a_", "a_2", "A"}, storetest.OddUserIDs...)
	for _, u := range users {
		for _, v := range users {
			if u == v {
				continue
			}
			k := tiering.SegmentKey(1, tiering.SegmentMeta{UserID: v, Class: tiering.ClassEpisodic, Type: memory.Episodic}, "1")
			if strings.HasPrefix(k, tiering.UserPrefix(1, u)) {
				t.Fatalf("key %s of %q lies under the prefix of %q", k, v, u)
			}
		}
	}
}
