package server

import (
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
)

// handleUsers pages through the users with memories, shard by shard; the cursor is the last shard and user
// a page gave. Each page reads the users of the shards it covers (seeks, not records). A shard split while
// a client pages moves users to a higher shard id, so such a client may see a user twice, never miss one
// that stays put.
func (s *Server) handleUsers(w http.ResponseWriter, r *http.Request, _ *decoded[noFields]) {
	limit, after, err := pageParams(r.URL.Query())
	prefix := r.URL.Query().Get("prefix") // the console looks users up by the start of their id
	if err != nil {
		s.fail(w, r, err)
		return
	}
	shard, last, err := usersCursor(after)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	n, err := s.c.ShardCount(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	resp := apiv1.UsersResponse{Users: []string{}}
	for ; shard < n; shard, last = shard+1, "" {
		users, err := s.c.ShardUsers(r.Context(), uint32(shard), false)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		users = withPrefix(users, prefix)
		sort.Strings(users)
		i := sort.SearchStrings(users, last)
		if i < len(users) && users[i] == last {
			i++
		}
		for ; i < len(users); i++ {
			if len(resp.Users) == limit {
				resp.NextCursor = encodeCursor(strconv.Itoa(shard) + "/" + resp.Users[len(resp.Users)-1])
				writeJSON(w, http.StatusOK, resp)
				return
			}
			resp.Users = append(resp.Users, users[i])
		}
	}
	writeJSON(w, http.StatusOK, resp)
}

func usersCursor(after string) (shard int, user string, err error) {
	if after == "" {
		return 0, "", nil
	}
	sh, user, ok := strings.Cut(after, "/")
	if shard, err = strconv.Atoi(sh); !ok || err != nil || shard < 0 {
		return 0, "", memory.FieldError("cursor", "not a cursor this API gave out")
	}
	return shard, user, nil
}

func withPrefix(users []string, prefix string) []string {
	if prefix == "" {
		return users
	}
	out := users[:0:0]
	for _, u := range users {
		if strings.HasPrefix(u, prefix) {
			out = append(out, u)
		}
	}
	return out
}
