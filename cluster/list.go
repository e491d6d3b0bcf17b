package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/memcluster/memcluster/storage"
)

// listScan bounds the records one page of a listing examines, so a narrow filter never reads a whole user
// in one request.
const listScan = 10000

// List returns one page of a user's memories in id order: up to limit of those after `after` that pass f,
// under the same consistency rules as Get.
func (n *Node) List(ctx context.Context, shard uint32, user, after string, limit int, f storage.ListFilter, stale bool) (storage.ListPage, error) {
	var out storage.ListPage
	err := n.routed(ctx, shard, user, func(shard uint32) error {
		return n.onShard(ctx, shard, "list", stale, func(ctx context.Context, r *Replica) error {
			var err error
			out, err = n.listLocal(ctx, r, user, after, limit, f, stale)
			return err
		}, func(ctx context.Context, addr string) error {
			fj, err := json.Marshal(f)
			if err != nil {
				return err
			}
			q := url.Values{"user": {user}, "after": {after}, "limit": {strconv.Itoa(limit)},
				"filter": {string(fj)}, "stale": {strconv.FormatBool(stale)}}
			return n.call(ctx, http.MethodGet, addr, fmt.Sprintf("%sshards/%d/list", internalPrefix, shard), q, "", nil, &out)
		})
	})
	return out, err
}

func (n *Node) listLocal(ctx context.Context, r *Replica, user, after string, limit int, f storage.ListFilter, stale bool) (storage.ListPage, error) {
	var out storage.ListPage
	err := readUser(ctx, r, user, stale, func() (err error) {
		out, err = n.db.List(r.Shard, user, after, limit, listScan, f)
		return err
	})
	return out, err
}

func (n *Node) handleList(w http.ResponseWriter, r *http.Request) {
	rep, ok := n.localReplica(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	var f storage.ListFilter
	if err := json.Unmarshal([]byte(q.Get("filter")), &f); err != nil {
		writeRPCError(w, &rpcError{Code: "invalid", Message: "bad filter: " + err.Error()})
		return
	}
	out, err := n.listLocal(r.Context(), rep, q.Get("user"), q.Get("after"), atoiOr(q.Get("limit"), 100), f, q.Get("stale") == "true")
	if err != nil {
		writeRPCError(w, toRPCError(err, rep))
		return
	}
	writeJSON(w, http.StatusOK, out)
}
