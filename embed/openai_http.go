package embed

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/memcluster/memcluster/internal/openaihttp"
)

// maxResponseBytes bounds an answer: 64 texts × 4096 dims as JSON is ~5 MiB.
const maxResponseBytes = 64 << 20

// StatusError is a non-2xx answer. It wraps ErrHTTPStatus.
type StatusError = openaihttp.StatusError

type embedRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type embedResponse struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// post sends one batch (retries: internal/openaihttp) and decodes the answer; a malformed answer is not retried.
func (c *OpenAI) post(ctx context.Context, batch []string) ([][]float32, error) {
	body, err := json.Marshal(embedRequest{Model: c.opt.Model, Input: batch})
	if err != nil {
		return nil, err
	}
	data, err := c.http.Post(ctx, body)
	if err != nil {
		return nil, err
	}
	return c.decode(data, len(batch))
}

// decode checks count, indexes and dimension and returns vectors in input order.
func (c *OpenAI) decode(data []byte, n int) ([][]float32, error) {
	var r embedResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadResponse, err)
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("%w: %d embeddings for %d inputs", ErrBadResponse, len(r.Data), n)
	}
	out := make([][]float32, n)
	for pos, d := range r.Data {
		i := pos // tolerate servers that omit index; order is then positional
		if d.Index != nil {
			i = *d.Index
		}
		if i < 0 || i >= n || out[i] != nil {
			return nil, fmt.Errorf("%w: bad or repeated index %d", ErrBadResponse, i)
		}
		if err := c.checkDim(len(d.Embedding)); err != nil {
			return nil, err
		}
		out[i] = d.Embedding
	}
	return out, nil
}
