package mem0

import (
	"net/http"
)

// routeServer registers the self-hosted mem0 server's paths (its FastAPI app): no trailing slashes, entity
// ids at the top level of bodies and in queries.
func (a *Adapter) routeServer() {
	a.handle("POST /memories", a.serverAdd)
	a.handle("GET /memories", a.listV1)
	a.handle("GET /memories/{id}", a.getOne)
	a.handle("PUT /memories/{id}", a.updateOne)
	a.handle("DELETE /memories/{id}", a.serverDelete)
	a.handle("GET /memories/{id}/history", a.historyOne)
	a.handle("DELETE /memories", a.deleteAllV1)
	a.handle("POST /search", a.serverSearch)
	a.unsupported("POST /reset", "resetting every memory is not offered; DELETE /memories?user_id= forgets one user")
	a.unsupported("POST /configure", "the node is configured by its flags, not over the API")
}

// serverAdd answers {results: [{id, memory, event}]}, the self-hosted server's shape.
func (a *Adapter) serverAdd(r *http.Request, c *call) (int, any, error) {
	out, err := a.doAdd(r, c)
	if err != nil {
		return 0, nil, err
	}
	res := make([]addResult, len(out.Results))
	for i, x := range out.Results {
		res[i] = x.addResult
	}
	return http.StatusOK, map[string]any{"results": res}, nil
}

func (a *Adapter) serverDelete(r *http.Request, c *call) (int, any, error) {
	if err := c.delete(r.PathValue("id")); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]string{"message": "Memory deleted successfully"}, nil
}

func (a *Adapter) serverSearch(r *http.Request, c *call) (int, any, error) {
	hits, err := c.searched(r, true)
	return http.StatusOK, map[string]any{"results": hits}, err
}
