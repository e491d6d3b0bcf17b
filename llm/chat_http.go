package llm

import (
	"context"

	"github.com/memcluster/memcluster/internal/openaihttp"
)

// maxResponseBytes bounds an answer: an extraction is a few KiB.
const maxResponseBytes = 4 << 20

// StatusError is a non-2xx answer. It wraps ErrHTTPStatus; the API key is masked in its message.
type StatusError = openaihttp.StatusError

// post sends body (retries with backoff: internal/openaihttp). A delay that would outlive ctx's deadline is
// not slept: the last error is returned at once.
func (c *Client) post(ctx context.Context, body []byte) ([]byte, error) {
	return c.http.Post(ctx, body)
}
