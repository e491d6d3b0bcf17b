package cluster

import (
	"context"
	"net/http"
)

// A read whose result only guards a commit that is conditional on it needs no read-index round trip. A user
// transaction carries the user's revision as it read it, and the state machine refuses the transaction when the
// revision has moved: a read that missed a write makes the commit conflict, it never commits a decision made on
// stale state. Such reads skip VerifyLeader (a heartbeat to every follower, and the wait for their answers) and
// the wait for the commit index: the leader answers from its applied state, which holds every write it or an
// earlier leader acknowledged. What they can miss is what a newer leader acknowledged while this one had not yet
// noticed it was deposed.

type unconfirmedKey struct{}

// Read-mode header of a forwarded read; a node that does not know it confirms the read, as before.
const (
	readModeHeader      = "X-Memcluster-Read"
	readModeUnconfirmed = "unconfirmed"
)

// Unconfirmed returns a context under which linearizable reads (not stale ones) are answered by the shard's
// leader from its applied state without confirming its leadership with a quorum. Use it only for reads whose
// results are committed conditionally on the user's revision, and confirm any answer given without a commit.
func Unconfirmed(ctx context.Context) context.Context {
	return context.WithValue(ctx, unconfirmedKey{}, true)
}

// IsUnconfirmed reports whether ctx came from Unconfirmed.
func IsUnconfirmed(ctx context.Context) bool {
	v, _ := ctx.Value(unconfirmedKey{}).(bool)
	return v
}

// withReadMode carries a forwarded read's mode (readModeHeader) into its context.
func withReadMode(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(readModeHeader) == readModeUnconfirmed {
			r = r.WithContext(Unconfirmed(r.Context()))
		}
		next.ServeHTTP(w, r)
	})
}
