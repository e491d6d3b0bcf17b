package cluster

import (
	"context"
	"fmt"
	"net/http"

	"github.com/memcluster/memcluster/internal/tenant"
	"github.com/memcluster/memcluster/retrieval"
	"github.com/memcluster/memcluster/storage"
)

// A shard checks the identity an API request was authorized for once more, on what it executes: the decoded
// command it proposes, the query it runs, the user it reads. The identity travels in ctx on the node that
// received the request and in the tenant.Header on a forwarded call, so a forwarded request is never wider at
// the shard than at the door. Work without an identity is the cluster's own (sweeper, re-embedding, calls
// of a node trusted by the cluster token).

// checkUsers refuses users outside ctx's identity.
func checkUsers(ctx context.Context, users ...string) error {
	id, ok := tenant.From(ctx)
	if !ok {
		return nil
	}
	return id.Check(users...)
}

// checkCommand refuses a command that touches a user outside ctx's identity.
func checkCommand(ctx context.Context, cmd []byte) error {
	id, ok := tenant.From(ctx)
	if !ok || id.All {
		return nil
	}
	c, err := storage.DecodeCommand(cmd)
	if err != nil {
		return err
	}
	return id.Check(c.Users()...)
}

// checkQuery refuses a search for a user outside ctx's identity, and a search across users whose patterns
// are wider than the identity's.
func checkQuery(ctx context.Context, q retrieval.Query) error {
	id, ok := tenant.From(ctx)
	if !ok {
		return nil
	}
	if !q.AllUsers {
		return id.Check(q.UserID)
	}
	if !id.Covers(q.UserPatterns) {
		return fmt.Errorf("%w: %s may not search across users %v", tenant.ErrForbidden, id.Name, q.UserPatterns)
	}
	return nil
}

// checkEveryUser refuses a listing of a shard's users to an identity that does not see every user.
func checkEveryUser(ctx context.Context) error {
	if id, ok := tenant.From(ctx); ok && !id.All {
		return fmt.Errorf("%w: %s may not list every user", tenant.ErrForbidden, id.Name)
	}
	return nil
}

// withIdentity puts a forwarded call's identity (tenant.Header) in its context; a malformed one is refused.
func withIdentity(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := r.Header.Get(tenant.Header)
		if v == "" {
			next.ServeHTTP(w, r)
			return
		}
		id, err := tenant.Decode(v)
		if err != nil {
			writeRPCError(w, &rpcError{Code: "invalid", Message: err.Error()})
			return
		}
		next.ServeHTTP(w, r.WithContext(tenant.With(r.Context(), id)))
	})
}
