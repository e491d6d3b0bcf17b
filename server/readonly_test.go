package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/raft"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/embed"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

// localCluster is a one-replica cluster without raft: commands go straight to a real ShardFSM on a real Pebble
// DB. Only what these tests call is implemented; anything else panics on the nil embedded interface.
type localCluster struct {
	Cluster
	db    *storage.DB
	fsm   *storage.ShardFSM
	index uint64
}

func (c *localCluster) ShardFor(context.Context, string) (uint32, error) { return 0, nil }
func (c *localCluster) WriteHealth() error                               { return c.db.WriteHealth() }
func (c *localCluster) InternalHandler() http.Handler                    { return http.NotFoundHandler() }
func (c *localCluster) RecordFormat() storage.RecordFormat               { return storage.RecordNewest }
func (c *localCluster) CommandFormat() storage.CommandFormat             { return storage.CommandNewest }
func (c *localCluster) LeaderURL(uint32) string                          { return "" }

func (c *localCluster) Propose(_ context.Context, _ uint32, cmd []byte) (storage.ApplyResult, error) {
	c.index++
	r := c.fsm.ApplyBatch([]*raft.Log{{Index: c.index, Term: 1, Type: raft.LogCommand, Data: cmd}})[0].(storage.ApplyResult)
	return r, r.Err
}

func (c *localCluster) Get(_ context.Context, shard uint32, user, id string, _ bool) (memory.Memory, error) {
	return c.db.GetMemory(shard, user, id)
}

// A node whose disk is under the free-space watermark refuses writes with 507 naming the problem, keeps
// serving reads, and takes writes again once space is back.
func TestReadOnlyNodeRefusesWritesServesReads(t *testing.T) {
	fs := vfs.NewMem()
	lc := newLocalCluster(t, storage.Options{FS: fs, MinFreeBytes: 1 << 30, DiskCheckInterval: -1})
	srv := newLocalServer(t, lc)
	plenty := vfs.DiskUsage{AvailBytes: 50 << 30, TotalBytes: 100 << 30, UsedBytes: 50 << 30}
	full := vfs.DiskUsage{AvailBytes: 200 << 20, TotalBytes: 100 << 30, UsedBytes: 100<<30 - 200<<20}

	fs.TestingSetDiskUsage(plenty)
	var put apiv1.PutResponse
	if code := call(t, srv, "POST", "/v1/memories", `{"user_id":"u1","text":"first"}`, &put); code != http.StatusCreated {
		t.Fatalf("put on a healthy disk: %d", code)
	}

	fs.TestingSetDiskUsage(full)
	var e apiv1.Error
	if code := call(t, srv, "POST", "/v1/memories", `{"user_id":"u1","text":"second"}`, &e); code != http.StatusInsufficientStorage {
		t.Fatalf("put on a full disk: %d, want 507", code)
	}
	if e.Error.Code != "read_only" || !strings.HasPrefix(e.Error.Message, "node is read-only: disk full: 200.0 MiB free") {
		t.Fatalf("error body %+v, want code read_only and a message naming the full disk", e.Error)
	}
	if code := call(t, srv, "DELETE", "/v1/memories/"+put.ID+"?user_id=u1", "", &e); code != http.StatusInsufficientStorage {
		t.Fatalf("delete on a full disk: %d, want 507", code)
	}
	var got apiv1.PutResponse
	if code := call(t, srv, "GET", "/v1/memories/"+put.ID+"?user_id=u1", "", &got); code != http.StatusOK || got.Text != "first" {
		t.Fatalf("read on a full disk: %d %+v, want 200 with the memory", code, got)
	}

	fs.TestingSetDiskUsage(plenty)
	if code := call(t, srv, "POST", "/v1/memories", `{"user_id":"u1","text":"third"}`, &put); code != http.StatusCreated {
		t.Fatalf("put after space came back: %d", code)
	}
}

// newLocalCluster opens a localCluster on a DB with o (its logger discarded), closed with the test.
func newLocalCluster(t *testing.T, o storage.Options) *localCluster {
	t.Helper()
	o.Logger = slog.New(slog.DiscardHandler)
	db, err := storage.Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	fsm, err := storage.NewShardFSM(db, 0, nil, o.Logger, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &localCluster{db: db, fsm: fsm}
}

// newLocalServer serves the API over c with the hashed embedder, closed with the test.
func newLocalServer(t *testing.T, c Cluster) *httptest.Server {
	t.Helper()
	emb, err := embed.NewHashed(embed.HashedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(c, emb, Options{Logger: slog.New(slog.DiscardHandler)}))
	t.Cleanup(srv.Close)
	return srv
}

func call(t *testing.T, srv *httptest.Server, method, path, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(resp.Body).Decode(out)
	return resp.StatusCode
}

// overloadedCluster is a localCluster whose node holds writes (its storage's compactions trailing) or whose
// shard leader refuses them for the same reason.
type overloadedCluster struct {
	*localCluster
	here, leader error
}

func (c *overloadedCluster) WaitWritable(context.Context) error { return c.here }

func (c *overloadedCluster) Propose(ctx context.Context, shard uint32, cmd []byte) (storage.ApplyResult, error) {
	if c.leader != nil {
		return storage.ApplyResult{}, c.leader
	}
	return c.localCluster.Propose(ctx, shard, cmd)
}

// An overloaded node refuses writes with 503 overloaded and Retry-After, naming the cause, whether it is this
// node or the shard's leader that is overloaded; reads go on, and writes are taken again once it is not.
func TestOverloadedNodeRefusesWritesServesReads(t *testing.T) {
	c := &overloadedCluster{localCluster: newLocalCluster(t, storage.Options{FS: vfs.NewMem(), MinFreeBytes: -1})}
	srv := newLocalServer(t, c)
	var put apiv1.PutResponse
	if code := call(t, srv, "POST", "/v1/memories", `{"user_id":"u1","text":"first"}`, &put); code != http.StatusCreated {
		t.Fatalf("put: %d", code)
	}
	for _, tc := range []struct {
		name         string
		here, leader error
	}{
		{"this node", fmt.Errorf("%w: level 0 holds 10 sublevels, writes are taken again at 8", storage.ErrOverloaded), nil},
		{"the shard leader", nil, fmt.Errorf("%w: writes stalled until flushes and compactions catch up", storage.ErrOverloaded)},
	} {
		c.here, c.leader = tc.here, tc.leader
		want := errors.Join(tc.here, tc.leader).Error()
		req, _ := http.NewRequest("POST", srv.URL+"/v1/memories", strings.NewReader(`{"user_id":"u1","text":"second"}`))
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e apiv1.Error
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" ||
			e.Error.Code != "overloaded" || e.Error.Message != want {
			t.Fatalf("%s overloaded: %d, Retry-After %q, %+v; want 503 overloaded with Retry-After 1 and %q", tc.name,
				resp.StatusCode, resp.Header.Get("Retry-After"), e.Error, want)
		}
		var got apiv1.PutResponse
		if code := call(t, srv, "GET", "/v1/memories/"+put.ID+"?user_id=u1", "", &got); code != http.StatusOK || got.Text != "first" {
			t.Fatalf("read while %s is overloaded: %d %+v, want 200 with the memory", tc.name, code, got)
		}
	}
	c.here, c.leader = nil, nil
	if code := call(t, srv, "POST", "/v1/memories", `{"user_id":"u1","text":"third"}`, &put); code != http.StatusCreated {
		t.Fatalf("put once no longer overloaded: %d", code)
	}
}
