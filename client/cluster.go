package client

import (
	"context"
	"encoding/json"

	"github.com/memcluster/memcluster/apiv1"
)

// ClusterStatus returns the cluster as the answering node sees it. It answers
// even when the cluster is unhealthy; check Healthy.
func (c *Client) ClusterStatus(ctx context.Context) (apiv1.ClusterStatus, error) {
	var st apiv1.ClusterStatus
	if err := c.do(ctx, "GET", apiv1.PathClusterStatus, nil, nil, &st); err != nil {
		return apiv1.ClusterStatus{}, err
	}
	return st, nil
}

// Health reports whether the node's process is up (/healthz).
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, "GET", apiv1.PathHealthz, nil, nil, nil)
}

// Ready reports whether the node can serve requests (/readyz).
func (c *Client) Ready(ctx context.Context) error {
	return c.do(ctx, "GET", apiv1.PathReadyz, nil, nil, nil)
}

// OpenAPI returns the node's OpenAPI 3.1 document (GET /v1/openapi.json), as JSON.
func (c *Client) OpenAPI(ctx context.Context) (json.RawMessage, error) {
	var doc json.RawMessage
	if err := c.do(ctx, "GET", apiv1.PathOpenAPI, nil, nil, &doc); err != nil {
		return nil, err
	}
	return doc, nil
}
