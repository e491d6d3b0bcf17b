package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

// A coordinator routes a user's request with its copy of the shard map, which can trail a split: the parent
// then answers ErrWrongShard (nothing executed), and the request goes to the shard whose range now holds the
// user. A map that has not learnt of the split yet is waited for, up to ctx's deadline.

// routed runs op on shard and follows ErrWrongShard answers to the user's owner.
func (n *Node) routed(ctx context.Context, shard uint32, user string, op func(shard uint32) error) error {
	backoff := 10 * time.Millisecond
	for {
		err := op(shard)
		if !errors.Is(err, storage.ErrWrongShard) {
			return err
		}
		n.metrics.redirects.Inc()
		next, werr := n.nextOwner(ctx, shard, &backoff, user)
		if werr != nil {
			return fmt.Errorf("%w (%v)", err, werr)
		}
		shard = next
	}
}

// nextOwner waits until this node's map gives one of users (which shard refused) to another shard, and returns
// that shard.
func (n *Node) nextOwner(ctx context.Context, shard uint32, backoff *time.Duration, users ...string) (uint32, error) {
	for {
		st := n.meta.State()
		for _, u := range users {
			if owner := st.Owner(u); owner != shard {
				return owner, nil
			}
		}
		if err := sleepCtx(ctx, *backoff); err != nil {
			return 0, fmt.Errorf("the shard map here still routes to shard %d: %w", shard, err)
		}
		*backoff = min(2**backoff, 250*time.Millisecond)
	}
}

// reroutePropose proposes a command that shard refused again, where its users are now. A command whose users
// now live on several shards (a put or an embedding update across users, planned with an older map) is cut in
// one command per shard.
func (n *Node) reroutePropose(ctx context.Context, shard uint32, cmd []byte, refusal error) (storage.ApplyResult, error) {
	c, err := storage.DecodeCommand(cmd)
	if err != nil {
		return storage.ApplyResult{}, err
	}
	users := c.Users()
	if len(users) == 0 {
		return storage.ApplyResult{}, refusal
	}
	n.metrics.redirects.Inc()
	backoff := 10 * time.Millisecond
	if _, err := n.nextOwner(ctx, shard, &backoff, users...); err != nil {
		return storage.ApplyResult{}, fmt.Errorf("%w (%v)", refusal, err)
	}
	enc := storage.Encoder{Records: n.RecordFormat(), Commands: n.CommandFormat()}
	parts, err := cutByOwner(c, cmd, n.meta.State().Owner, enc)
	if err != nil {
		return storage.ApplyResult{}, err
	}
	var total storage.ApplyResult
	for owner, part := range parts {
		res, err := n.Propose(ctx, owner, part)
		if err != nil {
			return total, err
		}
		total.Deleted += res.Deleted
		total.Conflict, total.Rev = res.Conflict, res.Rev
	}
	return total, nil
}

// cutByOwner encodes c once per shard that owns some of its users, puts with enc.
func cutByOwner(c storage.Command, cmd []byte, owner func(string) uint32, enc storage.Encoder) (map[uint32][]byte, error) {
	out := map[uint32][]byte{}
	switch c.Type {
	case storage.CmdPut:
		by := map[uint32][]int{}
		for i, m := range c.Puts {
			by[owner(m.UserID)] = append(by[owner(m.UserID)], i)
		}
		for s, idx := range by {
			puts := make([]memory.Memory, 0, len(idx))
			for _, i := range idx {
				puts = append(puts, c.Puts[i])
			}
			b, err := enc.Put(puts)
			if err != nil {
				return nil, err
			}
			out[s] = b
		}
		return out, nil
	case storage.CmdSetEmbeddings:
		by := map[uint32]storage.SetEmbeddingsPayload{}
		for _, it := range c.SetEmbed.Items {
			p := by[owner(it.UserID)]
			p.Items = append(p.Items, it)
			by[owner(it.UserID)] = p
		}
		for s, p := range by {
			b, err := storage.EncodeSetEmbeddings(p)
			if err != nil {
				return nil, err
			}
			out[s] = b
		}
		return out, nil
	}
	// Every other command names one user.
	out[owner(c.Users()[0])] = cmd
	return out, nil
}
