package server

import (
	"fmt"
	"net/http"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/storage"
)

// handleForget removes every memory of a user as one raft entry on the user's shard: all or nothing.
func (s *Server) handleForget(w http.ResponseWriter, r *http.Request, c *decoded[noFields]) {
	user := c.user
	shard, ok := s.shard(w, r, user)
	if !ok {
		return
	}
	res, ok := s.commit(w, r, shard)(storage.EncodeDeleteUser(storage.DeleteUserPayload{UserID: user,
		RequestID: s.ids.New(s.opts.Now())}))
	if !ok {
		return
	}
	n, err := s.dropExternal(r.Context(), shard, user)
	if err != nil {
		// The shard forgot; the external objects are still listed under the user's prefix, so a retried
		// forget finds them again.
		writeError(w, http.StatusBadGateway, "cold_store_failed",
			fmt.Sprintf("memories forgotten, but deleting their cold segments from the external store failed after %d: %v; retry the forget", n, err), "")
		return
	}
	s.log.Info("user forgotten", "user_id", user, "memories", res.Deleted, "external_segments", n)
	writeJSON(w, http.StatusOK, apiv1.ForgetResponse{UserID: user, Deleted: res.Deleted})
}
