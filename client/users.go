package client

import (
	"context"
	"net/url"
	"strings"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
)

// DeleteUser forgets a user: every memory of userID is removed, atomically. It returns how many were removed.
func (c *Client) DeleteUser(ctx context.Context, userID string) (int, error) {
	if userID == "" {
		return 0, memory.FieldError("user_id", "required")
	}
	var resp apiv1.ForgetResponse
	path := strings.Replace(apiv1.PathUser, "{user_id}", url.PathEscape(userID), 1)
	if err := c.do(ctx, "DELETE", path, nil, nil, &resp); err != nil {
		return 0, err
	}
	return resp.Deleted, nil
}
