package mem0

import (
	"encoding/base64"
	"strings"

	"github.com/memcluster/memcluster/memory"
)

// A mem0 memory id names a memory without its user, but memcluster finds a memory by user (the shard key)
// and id. So the adapter's ids carry both: "<memcluster id>.<base64url(user_id)>". They are opaque strings,
// not UUIDs (DESIGN.md).

// memID is the mem0 id of memory id of user.
func memID(user, id string) string {
	return id + "." + base64.RawURLEncoding.EncodeToString([]byte(user))
}

// parseMemID splits a mem0 id into user and memcluster id.
func parseMemID(s string) (user, id string, err error) {
	id, enc, ok := strings.Cut(s, ".")
	if ok && memory.ValidID(id) {
		if b, derr := base64.RawURLEncoding.DecodeString(enc); derr == nil && len(b) > 0 {
			return string(b), id, nil
		}
	}
	return "", "", invalidf("memory_id %q: not an id this adapter handed out (<memcluster id>.<base64url user_id>)", s)
}
