package server

import (
	"net/http"
)

// writeHealth is implemented by a Cluster that knows whether this node's disk takes writes (cluster.Node,
// backed by storage.DB.WriteHealth). A Cluster without it is always writable.
type writeHealth interface {
	WriteHealth() error
}

// writable answers 507 Insufficient Storage, naming the problem, while the node is read-only (disk under its
// free-space watermark, or failing writes); reads are not affected. It runs before the body is read, so a
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
