package client

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/memcluster/memcluster/apiv1"
)

// Nodes lists the members with their state, zone, replicas, leaders and bytes.
func (c *Client) Nodes(ctx context.Context) ([]apiv1.NodeStatus, error) {
	var out apiv1.NodesResponse
	err := c.do(ctx, "GET", apiv1.PathNodes, nil, nil, &out)
	return out.Nodes, err
}

// Shards lists the shards and the moves under way.
func (c *Client) Shards(ctx context.Context) (apiv1.ShardsResponse, error) {
	var out apiv1.ShardsResponse
	err := c.do(ctx, "GET", apiv1.PathShards, nil, nil, &out)
	return out, err
}

// DrainNode starts moving every replica and leadership off node; UndrainNode stops it.
func (c *Client) DrainNode(ctx context.Context, node string) (apiv1.NodeStateResponse, error) {
	var out apiv1.NodeStateResponse
	err := c.do(ctx, "POST", nodePath(apiv1.PathNodeDrain, node), nil, struct{}{}, &out)
	return out, err
}

// UndrainNode stops draining node.
func (c *Client) UndrainNode(ctx context.Context, node string) (apiv1.NodeStateResponse, error) {
	var out apiv1.NodeStateResponse
	err := c.do(ctx, "DELETE", nodePath(apiv1.PathNodeDrain, node), nil, nil, &out)
	return out, err
}

// RemoveNode takes node out of the cluster for good; force accepts the losses the answer names.
func (c *Client) RemoveNode(ctx context.Context, node string, force bool) (apiv1.NodeStateResponse, error) {
	var out apiv1.NodeStateResponse
	var q url.Values
	if force {
		q = url.Values{"force": {"true"}}
	}
	err := c.do(ctx, "DELETE", nodePath(apiv1.PathNode, node), q, nil, &out)
	return out, err
}

// TransferLeader moves shard's leadership to node and returns once it leads.
func (c *Client) TransferLeader(ctx context.Context, shard int, node string) (apiv1.TransferLeaderResponse, error) {
	var out apiv1.TransferLeaderResponse
	path := strings.Replace(apiv1.PathTransferLeader, "{shard}", strconv.Itoa(shard), 1)
	err := c.do(ctx, "POST", path, nil, apiv1.TransferLeaderRequest{To: node}, &out)
	return out, err
}

// SplitShard splits shard in two; with wait the answer comes once the new shard serves its users.
func (c *Client) SplitShard(ctx context.Context, shard int, wait bool) (apiv1.SplitResponse, error) {
	var out apiv1.SplitResponse
	path := strings.Replace(apiv1.PathShardSplit, "{shard}", strconv.Itoa(shard), 1)
	err := c.do(ctx, "POST", path, nil, apiv1.SplitRequest{Wait: &wait}, &out)
	return out, err
}

// Rebalance pauses or resumes rebalancing.
func (c *Client) Rebalance(ctx context.Context, paused bool) (apiv1.RebalanceResponse, error) {
	var out apiv1.RebalanceResponse
	err := c.do(ctx, "POST", apiv1.PathRebalance, nil, apiv1.RebalanceRequest{Paused: &paused}, &out)
	return out, err
}

func nodePath(pattern, node string) string {
	return strings.Replace(pattern, "{node_id}", url.PathEscape(node), 1)
}
