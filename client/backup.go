package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"

	"github.com/memcluster/memcluster/apiv1"
)

// Backup streams a backup of the whole cluster into w and returns the bytes written. It is not bounded by the
// client's timeout (a backup lasts as long as the cluster is large); cancel ctx to stop it. With coldRefs the
// external cold segments are referenced by checksum instead of included. A stream that breaks off returns an
// error: what reached w is then not a whole backup.
func (c *Client) Backup(ctx context.Context, w io.Writer, coldRefs bool) (int64, error) {
	var q url.Values
	if coldRefs {
		q = url.Values{"cold": {"refs"}}
	}
	resp, err := c.send(ctx, "GET", apiv1.PathBackup, q, nil, "")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, fmt.Errorf("backup stream broke off after %d bytes: %w", n, err)
	}
	return n, nil
}

// Restore sends the backup r to the cluster, which checks all of it before it writes anything, and returns
// what was restored; like Backup it is bounded by ctx only.
func (c *Client) Restore(ctx context.Context, r io.Reader, force bool) (apiv1.BackupRestoreResponse, error) {
	var out apiv1.BackupRestoreResponse
	var q url.Values
	if force {
		q = url.Values{"force": {"true"}}
	}
	resp, err := c.send(ctx, "POST", apiv1.PathRestore, q, r, "application/octet-stream")
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return out, fmt.Errorf("restore: decode answer: %w", err)
	}
	return out, nil
}
