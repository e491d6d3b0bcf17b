package cluster

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

// ReadSide reads a user's side records (sessions, facts, history, samples) of one space under a key prefix,
// with the user's revision, under the same consistency rules as Get.
func (n *Node) ReadSide(ctx context.Context, shard uint32, space byte, user, prefix string, limit int, stale bool) (storage.SideRead, error) {
	return n.readSide(ctx, shard, sideQuery{space: space, user: user, prefix: prefix, limit: limit}, stale)
}

// ReadSideAfter pages through a whole side space of a user: the records whose key sorts after `after`.
func (n *Node) ReadSideAfter(ctx context.Context, shard uint32, space byte, user, after string, limit int, stale bool) (storage.SideRead, error) {
	return n.readSide(ctx, shard, sideQuery{space: space, user: user, after: after, limit: limit}, stale)
}

// sideQuery is a read of one user's side space: under prefix, or after a key.
type sideQuery struct {
	space               byte
	user, prefix, after string
	limit               int
}

func (n *Node) readSide(ctx context.Context, shard uint32, sq sideQuery, stale bool) (storage.SideRead, error) {
	var out storage.SideRead
	err := n.routed(ctx, shard, sq.user, func(shard uint32) error {
		return n.onShard(ctx, shard, "side", stale, func(ctx context.Context, r *Replica) error {
			var err error
			out, err = n.readSideLocal(ctx, r, sq, stale)
			return err
		}, func(ctx context.Context, addr string) error {
			q := url.Values{"user": {sq.user}, "space": {string(sq.space)}, "prefix": {sq.prefix},
				"limit": {strconv.Itoa(sq.limit)}, "stale": {strconv.FormatBool(stale)}}
			if sq.after != "" {
				q.Set("after", sq.after) // absent for plain reads, so older nodes serve them unchanged
			}
			return n.call(ctx, http.MethodGet, addr, fmt.Sprintf("%sshards/%d/side", internalPrefix, shard), q, "", nil, &out)
		})
	})
	return out, err
}

// Recent returns a user's newest memories of the given types (all types when empty), newest first, at most
// limit, without their embeddings.
func (n *Node) Recent(ctx context.Context, shard uint32, user string, types []memory.Type, limit int, stale bool) ([]memory.Memory, error) {
	var out []memory.Memory
	err := n.routed(ctx, shard, user, func(shard uint32) error {
		return n.onShard(ctx, shard, "recent", stale, func(ctx context.Context, r *Replica) error {
			var err error
			out, err = n.recentLocal(ctx, r, user, types, limit, stale)
			return err
		}, func(ctx context.Context, addr string) error {
			q := url.Values{"user": {user}, "limit": {strconv.Itoa(limit)}, "stale": {strconv.FormatBool(stale)}}
			for _, t := range types {
				q.Add("type", string(t))
			}
			return n.call(ctx, http.MethodGet, addr, fmt.Sprintf("%sshards/%d/recent", internalPrefix, shard), q, "", nil, &out)
		})
	})
	return out, err
}

func (n *Node) readSideLocal(ctx context.Context, r *Replica, sq sideQuery, stale bool) (out storage.SideRead, err error) {
	err = readUser(ctx, r, sq.user, stale, func() error {
		if sq.after != "" {
			out, err = n.db.ReadSideAfter(r.Shard, sq.space, sq.user, sq.after, sq.limit)
		} else {
			out, err = n.db.ReadSide(r.Shard, sq.space, sq.user, sq.prefix, sq.limit)
		}
		return err
	})
	return out, err
}

// readUser runs read, a read of one user's records on a local replica, with what every such read needs: the
// caller may see the user, the replica is current (unless stale), and the shard owns the user while read runs
// (a split that moves the user meanwhile turns read's result into ErrWrongShard, and the read is routed again).
func readUser(ctx context.Context, r *Replica, user string, stale bool, read func() error) error {
	if err := checkUsers(ctx, user); err != nil {
		return err
	}
	if err := barrier(ctx, r, stale); err != nil {
		return err
	}
	return r.FSM.ReadOwned(user, read)
}

func (n *Node) recentLocal(ctx context.Context, r *Replica, user string, types []memory.Type, limit int, stale bool) (out []memory.Memory, err error) {
	err = readUser(ctx, r, user, stale, func() error {
		out, err = n.db.Recent(r.Shard, user, types, limit)
		return err
	})
	return out, err
}

func barrier(ctx context.Context, r *Replica, stale bool) error {
	if stale {
		return nil
	}
	if r.handsOn() {
		return ErrNotLeader // elected while its indexes load: it hands the leadership on (loading.go)
	}
	if IsUnconfirmed(ctx) {
		return r.leaderBarrier(ctx)
	}
	return r.ReadBarrier(ctx)
}

func (n *Node) handleReadSide(w http.ResponseWriter, r *http.Request) {
	rep, ok := n.localReplica(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	space, limit := q.Get("space"), atoiOr(q.Get("limit"), 0)
	stale := q.Get("stale") == "true"
	if len(space) != 1 {
		writeRPCError(w, &rpcError{Code: "invalid", Message: "bad space"})
		return
	}
	sq := sideQuery{space: space[0], user: q.Get("user"), prefix: q.Get("prefix"), after: q.Get("after"), limit: limit}
	out, err := n.readSideLocal(r.Context(), rep, sq, stale)
	if err != nil {
		writeRPCError(w, toRPCError(err, rep))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (n *Node) handleRecent(w http.ResponseWriter, r *http.Request) {
	rep, ok := n.localReplica(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	var types []memory.Type
	for _, t := range q["type"] {
		types = append(types, memory.Type(t))
	}
	out, err := n.recentLocal(r.Context(), rep, q.Get("user"), types, atoiOr(q.Get("limit"), 0), q.Get("stale") == "true")
	if err != nil {
		writeRPCError(w, toRPCError(err, rep))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func atoiOr(s string, def int) int {
	if v, err := strconv.Atoi(s); err == nil {
		return v
	}
	return def
}

// ScanLocalSide scans this node's copy of a side space of shard across users (for background jobs run by the
// shard's leader, which re-read through the normal path before changing anything).
func (n *Node) ScanLocalSide(shard uint32, space byte, fn func(user, key string, value []byte) bool) error {
	return n.db.ScanSide(shard, space, fn)
}

// LocalUsers lists the users with memories in this node's copy of shard (for the shard leader's background
// jobs, which re-read through the normal path before changing anything).
func (n *Node) LocalUsers(shard uint32, fn func(user string) bool) error {
	return n.db.Users(shard, fn)
}

// ShardUsers lists, sorted, the users with memories in shard, read where Get would read (for cluster-wide
// operator jobs: tier run and tier status without a user).
func (n *Node) ShardUsers(ctx context.Context, shard uint32, stale bool) ([]string, error) {
	var out []string
	err := n.onShard(ctx, shard, "users", stale, func(ctx context.Context, r *Replica) error {
		var err error
		out, err = n.localUsers(ctx, r, stale)
		return err
	}, func(ctx context.Context, addr string) error {
		return n.call(ctx, http.MethodGet, addr, fmt.Sprintf("%sshards/%d/users", internalPrefix, shard),
			url.Values{"stale": {strconv.FormatBool(stale)}}, "", nil, &out)
	})
	return out, err
}

func (n *Node) localUsers(ctx context.Context, r *Replica, stale bool) ([]string, error) {
	if err := checkEveryUser(ctx); err != nil {
		return nil, err
	}
	if err := barrier(ctx, r, stale); err != nil {
		return nil, err
	}
	out := []string{}
	err := n.db.Users(r.Shard, func(u string) bool { out = append(out, u); return ctx.Err() == nil })
	if err == nil {
		err = ctx.Err()
	}
	return out, err
}

func (n *Node) handleUsers(w http.ResponseWriter, r *http.Request) {
	rep, ok := n.localReplica(w, r)
	if !ok {
		return
	}
	out, err := n.localUsers(r.Context(), rep, r.URL.Query().Get("stale") == "true")
	if err != nil {
		writeRPCError(w, toRPCError(err, rep))
		return
	}
	writeJSON(w, http.StatusOK, out)
}
