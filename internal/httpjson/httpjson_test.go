package httpjson

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
)

// sample is a search answer with what encoders disagree on when they do: HTML characters, invalid UTF-8,
// escapes, small and large floats, empty and nil collections, times with zones.
func sample(n int) apiv1.SearchResponse {
	var r apiv1.SearchResponse
	for i := range n {
		m := memory.Memory{ID: "m" + strconv.Itoa(i), UserID: "u", Type: memory.Episodic,
			Text:       "user: <b>R&D</b> \"quoted\"\n\ttab \u2028 bad \xff utf8 é 😀 " + strings.Repeat("long text ", i%50),
			OccurredAt: time.Date(2023, 5, 26, 19, 25, 0, 0, time.UTC),
			CreatedAt:  time.Date(2026, 11, 30, 6, 58, 0, 549267766, time.FixedZone("x", 5*3600+1800)),
			Importance: 0.5, Metadata: map[string]string{"z": "1", "a": "<>", "session_id": "s" + strconv.Itoa(i)},
			Tags: []string{"t"}, EmbedModel: "hashed-v1"}
		if i%3 == 0 {
			m.Tags, m.Metadata = []string{}, nil
		}
		r.Results = append(r.Results, apiv1.SearchResult{Memory: m, Score: 1 / float64(i+3), VectorScore: 1e-21 * float64(i),
			TextScore: 1e21 * float64(i), Recency: 1, Context: float64(i) / 7})
	}
	return r
}

func TestWriteIsEncodersOutputWithLength(t *testing.T) {
	for _, n := range []int{0, 1, 200} {
		v := sample(n)
		rec := httptest.NewRecorder()
		if err := Write(rec, 201, v); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(v); err != nil {
			t.Fatal(err)
		}
		if rec.Code != 201 || !bytes.Equal(rec.Body.Bytes(), want.Bytes()) {
			t.Fatalf("n=%d: status %d, body differs from encoding/json's:\n%.300s\n%.300s", n, rec.Code, rec.Body, want.String())
		}
		if got := rec.Header().Get("Content-Length"); got != strconv.Itoa(want.Len()) {
			t.Fatalf("n=%d: Content-Length %q, body %d bytes", n, got, want.Len())
		}
		if got := rec.Header().Get("Content-Type"); got != "application/json" {
			t.Fatalf("Content-Type %q", got)
		}
	}
}

func TestWriteSendsNothingWhenTheValueCannotBeEncoded(t *testing.T) {
	rec := httptest.NewRecorder()
	err := Write(rec, 200, apiv1.SearchResponse{Results: []apiv1.SearchResult{{Score: math.NaN()}}})
	if err == nil || !strings.Contains(err.Error(), "encode answer") {
		t.Fatalf("err = %v, want an encode error", err)
	}
	if rec.Body.Len() != 0 || len(rec.Header()) != 0 {
		t.Fatalf("wrote %q with headers %v", rec.Body, rec.Header())
	}
}

func TestReadWhateverTheDeclaredLength(t *testing.T) {
	v := sample(40)
	body, _ := json.Marshal(v)
	for _, size := range []int64{-1, 0, 10, int64(len(body)), int64(len(body)) + 1000, 1 << 40} {
		var got apiv1.SearchResponse
		// One byte a read: the buffer grows however the body arrives.
		if err := Read(iotest.OneByteReader(bytes.NewReader(body)), size, &got); err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		var want apiv1.SearchResponse
		_ = json.Unmarshal(body, &want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("size %d: decoded differently from encoding/json", size)
		}
	}
}

func TestReadPassesOnTheReadersError(t *testing.T) {
	err := Read(iotest.ErrReader(iotest.ErrTimeout), -1, new(apiv1.SearchResponse))
	if err != iotest.ErrTimeout {
		t.Fatalf("err = %v", err)
	}
}

// FuzzReadMatchesEncodingJSON holds Read to encoding/json.Unmarshal: the same values, and an error exactly when
// it errs.
func FuzzReadMatchesEncodingJSON(f *testing.F) {
	b, _ := json.Marshal(sample(3))
	f.Add(b)
	for _, s := range []string{
		`{"results":[{"id":"a","SCORE":1,"metadata":{"k":"v"},"occurred_at":"2024-02-29T23:59:59.5+05:30"}]}`,
		`{"results":null,"partial":true,"missing_shards":[{"shard":3,"error":"x"}]}`,
		`{"results":[{"id":"a","id":"b","text":"\ud83d\ude00 \xff"}]} `, `{"results":[]} x`, `[]`, `null`, ``,
		`{"results":[{"score":"1"}]}`, `{"results":[{"plan":{"terms":["a"],"fusion":"rrf"}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want, got apiv1.SearchResponse
		werr := json.Unmarshal(b, &want)
		gerr := Read(bytes.NewReader(b), int64(len(b)), &got)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q: encoding/json error %v, Read's %v", b, werr, gerr)
		}
		if werr == nil && !reflect.DeepEqual(want, got) {
			t.Fatalf("%q:\nencoding/json %+v\nRead          %+v", b, want, got)
		}
	})
}
