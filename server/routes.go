package server

import (
	"net/http"

	"github.com/memcluster/memcluster/apiv1"
)

// noFields is the body of a route that takes none, or an optional empty object ({}).
type noFields struct{}

// The route table: every /v1 endpoint, its role, where its request names its user, and the scope that user
// (or the body's users) gives it. handle (route.go) decodes and authorizes; the handlers only execute.
func (s *Server) routeV1() {
	user := pathOrQueryUser[noFields]
	handle(s, endpoint{"POST", apiv1.PathMemories, "put", RoleWriter, userBody, bodyRequired},
		func(c *decoded[apiv1.PutRequest]) scope { return ofUsers(c.body.UserID) }, s.handlePut)
	handle(s, endpoint{"POST", apiv1.PathMemoriesBatch, "put_batch", RoleWriter, userBody, bodyRequired},
		batchScope, s.handlePutBatch)
	handle(s, endpoint{"GET", apiv1.PathMemory, "get", RoleReader, userQuery, bodyNone}, user, s.handleGet)
	handle(s, endpoint{"PATCH", apiv1.PathMemory, "update", RoleWriter, userQuery, bodyRequired},
		pathOrQueryUser[apiv1.UpdateRequest], s.handleUpdate)
	handle(s, endpoint{"DELETE", apiv1.PathMemory, "delete", RoleWriter, userQuery, bodyNone}, user, s.handleDelete)
	handle(s, endpoint{"POST", apiv1.PathSearch, "search", RoleReader, userBody, bodyRequired},
		func(c *decoded[apiv1.SearchRequest]) scope {
			if c.body.UserID == "" {
				return scope{across: true} // narrowed to the token's patterns by buildQuery
			}
			return ofUsers(c.body.UserID)
		}, s.handleSearch)
	handle(s, endpoint{"DELETE", apiv1.PathUser, "forget", RoleWriter, userPath, bodyNone}, user, s.handleForget)
	handle(s, endpoint{"GET", apiv1.PathClusterStatus, "status", RoleReader, userNone, bodyNone},
		func(*decoded[noFields]) scope { return scope{none: true} }, s.handleStatus)

	// The memory model: every route names its user in the path.
	handle(s, endpoint{"GET", apiv1.PathSession, "session_get", RoleReader, userPath, bodyNone}, user, s.handleSession)
	handle(s, endpoint{"POST", apiv1.PathSessionMessages, "session_append", RoleWriter, userPath, bodyRequired},
		pathOrQueryUser[apiv1.AppendRequest], s.handleAppend)
	handle(s, endpoint{"POST", apiv1.PathSessionFlush, "session_flush", RoleWriter, userPath, bodyOptional}, user, s.handleFlush)
	handle(s, endpoint{"POST", apiv1.PathSessionEnd, "session_end", RoleWriter, userPath, bodyOptional}, user, s.handleEnd)
	handle(s, endpoint{"POST", apiv1.PathRemember, "remember", RoleWriter, userPath, bodyRequired},
		pathOrQueryUser[apiv1.RememberRequest], s.handleRemember)
	handle(s, endpoint{"GET", apiv1.PathFacts, "facts", RoleReader, userPath, bodyNone}, user, s.handleFacts)
	handle(s, endpoint{"GET", apiv1.PathHistory, "history", RoleReader, userPath, bodyNone}, user, s.handleHistory)
	handle(s, endpoint{"POST", apiv1.PathSignals, "signals", RoleWriter, userPath, bodyRequired},
		pathOrQueryUser[apiv1.SignalsRequest], s.handleSignals)
	handle(s, endpoint{"GET", apiv1.PathAggregates, "aggregates", RoleReader, userPath, bodyNone}, user, s.handleAggregates)
	handle(s, endpoint{"POST", apiv1.PathConsolidate, "consolidate", RoleWriter, userPath, bodyOptional}, user, s.handleConsolidate)
	handle(s, endpoint{"POST", apiv1.PathPatternCorrect, "pattern_correct", RoleWriter, userPath, bodyRequired},
		pathOrQueryUser[apiv1.CorrectRequest], s.handleCorrect)
	handle(s, endpoint{"GET", apiv1.PathGraph, "graph", RoleReader, userPath, bodyNone}, user, s.handleGraph)
	handle(s, endpoint{"POST", apiv1.PathContext, "context", RoleReader, userPath, bodyRequired},
		pathOrQueryUser[apiv1.ContextRequest], s.handleContext)

	// Listing, export and import (apiv1/transfer.go): paged reads of one user, id-preserving writes.
	handle(s, endpoint{"GET", apiv1.PathUserMemories, "list", RoleReader, userPath, bodyNone}, user, s.handleListMemories)
	handle(s, endpoint{"GET", apiv1.PathUserRecords, "records", RoleReader, userPath, bodyNone}, user, s.handleRecords)
	handle(s, endpoint{"POST", apiv1.PathUserImport, "import", RoleWriter, userPath, bodyRequired},
		pathOrQueryUser[apiv1.ImportRequest], s.handleImport)
	handle(s, endpoint{"GET", apiv1.PathUsers, "users", RoleAdmin, userNone, bodyNone},
		func(*decoded[noFields]) scope { return scope{every: true} }, s.handleUsers)
	// OpenClaw workspaces: the user is in the path; agent_id picks the workspace (workspace/DESIGN.md).
	handle(s, endpoint{"GET", apiv1.PathWorkspace, "workspace_get", RoleReader, userPath, bodyNone}, user, s.handleWorkspace)
	handle(s, endpoint{"PUT", apiv1.PathWorkspaceFiles, "workspace_put", RoleWriter, userPath, bodyRequired},
		pathOrQueryUser[apiv1.WorkspacePutRequest], s.handleWorkspacePut)
	handle(s, endpoint{"DELETE", apiv1.PathWorkspaceFiles, "workspace_delete", RoleWriter, userPath, bodyNone},
		user, s.handleWorkspaceDelete)
	handle(s, endpoint{"GET", apiv1.PathWorkspaceLines, "workspace_lines", RoleReader, userPath, bodyNone}, user,
		s.handleWorkspaceLines)
	handle(s, endpoint{"POST", apiv1.PathWorkspaceSearch, "workspace_search", RoleReader, userPath, bodyRequired},
		pathOrQueryUser[apiv1.WorkspaceSearchRequest], s.handleWorkspaceSearch)

	// Tiering: without a user, a run or a status spans every user of the cluster.
	handle(s, endpoint{"POST", apiv1.PathTierRun, "tier_run", RoleAdmin, userBody, bodyRequired},
		func(c *decoded[apiv1.TierRunRequest]) scope { return userOrEvery(c.body.UserID) }, s.handleTierRun)
	handle(s, endpoint{"GET", apiv1.PathTierStatus, "tier_status", RoleReader, userQuery, bodyNone},
		func(c *decoded[noFields]) scope { return userOrEvery(c.user) }, s.handleTierStatus)
}

// batchScope names every user of a batch, each item's own: a batch is allowed only if all of them are.
func batchScope(c *decoded[apiv1.PutBatchRequest]) scope {
	users := make([]string, len(c.body.Memories))
	for i, m := range c.body.Memories {
		users[i] = m.UserID
	}
	return ofUsers(users...)
}

func userOrEvery(user string) scope {
	if user == "" {
		return scope{every: true}
	}
	return ofUsers(user)
}

func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request, _ *decoded[noFields]) {
	writeJSON(w, http.StatusOK, s.c.Status(r.Context()))
}
