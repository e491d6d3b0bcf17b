package chaos

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/client"
)

// Operator actions of the nemesis: they go through the public API of any running member, as memctl does. A
// refusal (the target holds no replica, a node went down meanwhile) is logged, not a failure: the checks after
// the schedule judge the cluster.

// admin runs fn with the client of the first running member other than not.
func (nm *nemesis) admin(not *node, fn func(ctx context.Context, c *client.Client) error) error {
	var err error = errors.New("no member running")
	for _, m := range nm.c.up() {
		if m == not {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		err = fn(ctx, m.client)
		cancel()
		if err == nil {
			return nil
		}
	}
	return err
}

func (nm *nemesis) transfer(shard int, to *node) {
	err := nm.admin(nil, func(ctx context.Context, c *client.Client) error {
		_, err := c.TransferLeader(ctx, shard, to.id)
		return err
	})
	nm.logf("transfer shard %d leadership to %s: %v", shard, to.id, errOr(err, "done"))
}

// drain drains n and waits up to 90 s for it to hold nothing; it reports whether it got there.
func (nm *nemesis) drain(n *node) bool {
	t0 := time.Now()
	err := nm.admin(nil, func(ctx context.Context, c *client.Client) error {
		_, err := c.DrainNode(ctx, n.id)
		return err
	})
	if err != nil {
		nm.logf("drain %s: %v", n.id, err)
		return false
	}
	nm.logf("draining %s", n.id)
	for time.Since(t0) < 90*time.Second {
		var left apiv1.NodeStatus
		_ = nm.admin(n, func(ctx context.Context, c *client.Client) error {
			nodes, err := c.Nodes(ctx)
			if i := slices.IndexFunc(nodes, func(s apiv1.NodeStatus) bool { return s.ID == n.id }); err == nil && i >= 0 {
				left = nodes[i]
			}
			return err
		})
		if left.ID != "" && left.Replicas == 0 && left.Leaders == 0 {
			nm.logf("%s drained in %.1fs", n.id, time.Since(t0).Seconds())
			return true
		}
		time.Sleep(500 * time.Millisecond)
	}
	nm.logf("%s not drained after %v", n.id, time.Since(t0).Round(time.Millisecond))
	return false
}

func (nm *nemesis) undrain(n *node) {
	err := nm.admin(nil, func(ctx context.Context, c *client.Client) error {
		_, err := c.UndrainNode(ctx, n.id)
		return err
	})
	nm.logf("undrain %s: %v", n.id, errOr(err, "done"))
}

// remove drains n, removes it for good, stops its process and takes it out of the members. A removal that
// is refused (the drain did not finish) undrains instead.
func (nm *nemesis) remove(n *node) error {
	if !nm.drain(n) {
		nm.undrain(n)
		return nil
	}
	err := nm.admin(n, func(ctx context.Context, c *client.Client) error {
		_, err := c.RemoveNode(ctx, n.id, false)
		return err
	})
	var ae *client.APIError
	if errors.As(err, &ae) && ae.Status == http.StatusConflict {
		nm.logf("remove %s refused: %v", n.id, err)
		nm.undrain(n)
		return nil
	}
	if err != nil {
		return err
	}
	n.kill()
	old := n.id
	nm.c.mu.Lock()
	nm.c.members = slices.DeleteFunc(nm.c.members, func(m *node) bool { return m == n })
	err = n.recycle(nm.c.args)
	nm.c.spares = append(nm.c.spares, n)
	nm.c.mu.Unlock()
	nm.logf("%s removed and stopped; its place is a spare again as %s", old, n.id)
	return err
}

// reshard splits shard through the API and SIGKILLs n while the split goes on (n restarts after hold), then
// waits up to 90 s for the split to finish. A refused split (one is under way) is logged, not a failure.
func (nm *nemesis) reshard(shard int, n *node, hold time.Duration) error {
	t0 := time.Now()
	var res apiv1.SplitResponse
	err := nm.admin(n, func(ctx context.Context, c *client.Client) error {
		var err error
		res, err = c.SplitShard(ctx, shard, false)
		return err
	})
	if err != nil {
		nm.logf("split shard %d: %v", shard, err)
		return nil
	}
	n.kill()
	nm.logf("splitting shard %d into %d; SIGKILL %s for %v", shard, res.Child, n.id, hold)
	time.Sleep(hold)
	if err := n.start(); err != nil {
		return err
	}
	for time.Since(t0) < 90*time.Second {
		var done bool
		_ = nm.admin(nil, func(ctx context.Context, c *client.Client) error {
			st, err := c.ClusterStatus(ctx)
			done = err == nil && (st.Split == nil || st.Split.Child != res.Child)
			return err
		})
		if done {
			nm.logf("shard %d split into %d in %.1fs", shard, res.Child, time.Since(t0).Seconds())
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	nm.logf("shard %d still splitting into %d after %v", shard, res.Child, time.Since(t0).Round(time.Millisecond))
	return nil
}

func errOr(err error, ok string) any {
	if err != nil {
		return err
	}
	return ok
}
