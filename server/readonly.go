package server

import (
	"context"
	"net/http"
)

// writeHealth is implemented by a Cluster that knows whether this node's disk takes writes (cluster.Node,
// backed by storage.DB.WriteHealth). A Cluster without it is always writable.
type writeHealth interface {
	WriteHealth() error
}

// writable answers 507 Insufficient Storage, naming the problem, while the node is read-only (disk under its
// free-space watermark, or failing writes); reads are not affected. It runs before anything is embedded, so a
// refused write costs nothing. Writer routes are exactly the ones that change state. The refusals show in
// memcluster_api_requests_total with code 507.
func (s *Server) writable(w http.ResponseWriter) bool {
	h, ok := s.c.(writeHealth)
	if !ok {
		return true
	}
	err := h.WriteHealth()
	if err == nil {
		return true
	}
	writeError(w, http.StatusInsufficientStorage, "read_only", err.Error(), "")
	return false
}

// writePressure is implemented by a Cluster whose node can hold writes while its storage's compactions trail
// (cluster.Node, backed by storage.DB.WaitWritable).
type writePressure interface {
	WaitWritable(ctx context.Context) error
}

// unburdened holds a write while this node's storage is overloaded, and answers 503 overloaded, with
// Retry-After, if it still is after the node's wait. It runs once the body is decoded, before anything is
// embedded or proposed, so a refused write costs little and may be sent again as it was. A shard leader on
// another node checks its own storage again before it proposes (cluster's proposeLocal).
func (s *Server) unburdened(w http.ResponseWriter, r *http.Request) bool {
	p, ok := s.c.(writePressure)
	if !ok {
		return true
	}
	if err := p.WaitWritable(r.Context()); err != nil {
		s.fail(w, r, err) // 503 overloaded, counted, as a leader's refusal is
		return false
	}
	return true
}
