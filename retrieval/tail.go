package retrieval

import (
	"errors"
	"fmt"

	"github.com/memcluster/memcluster/fulltext"
	"github.com/memcluster/memcluster/memory"
	"github.com/memcluster/memcluster/storage"
)

// TailReader reads a shard's raft log between the applied index an index reflects (bleve's marker, the vectors'
// checkpoint) and the records' applied index (internal/nodeindex implements it over the node's raft log store).
type TailReader interface {
	// Tail calls fn with the command of every entry in (from, to], oldest first, and reports whether it could
	// vouch for the whole range: every entry present and the entry at to of term term. By raft's log matching
	// those are then the committed entries that brought the records from from to to, even when a snapshot was
	// installed in between (its trailing entries below it are either absent, which is a gap, or the committed
	// ones). When it reports false the caller re-reads everything, whatever fn saw.
	Tail(from, to, term uint64, fn func(storage.Command)) (bool, error)
}

// touched is what a tail of commands changed in the full-text index: memories by id, and whole users (a forget).
type touched struct {
	ids   map[string]string // memory id → user
	users map[string]bool
	whole bool // a command the tail cannot follow by ids (a split): re-feed everything
}

func (t *touched) note(c storage.Command) {
	switch c.Type {
	case storage.CmdPut:
		t.puts(c.Puts)
	case storage.CmdDelete:
		for _, id := range c.Delete.IDs {
			t.ids[id] = c.Delete.UserID
		}
	case storage.CmdDeleteUser:
		t.users[c.DeleteUser.UserID] = true
	case storage.CmdUserTxn, storage.CmdUpdate:
		t.puts(c.UserTxn.Puts)
		for _, id := range c.UserTxn.Deletes {
			t.ids[id] = c.UserTxn.UserID
		}
	case storage.CmdSetEmbeddings:
		for _, it := range c.SetEmbed.Items {
			t.ids[it.ID] = it.UserID // no text changes, but the vectors' checkpoint must read them again
		}
	case storage.CmdPrune:
		// Request results only.
	default:
		t.whole = true
	}
}

func (t *touched) puts(ms []memory.Memory) {
	for _, m := range ms {
		t.ids[m.ID] = m.UserID
	}
}

// refeedTail brings bleve from its marker from up to the records' applied index to by re-indexing, from the
// records, only the memories the log entries in between touched. When the tail cannot be used (no reader, the
// marker ahead of the records, the log cannot vouch for the range) it writes nothing and says why.
func (s *ShardIndex) refeedTail(from, to, term uint64) (n int, why string, err error) {
	switch {
	case s.tail == nil:
		return 0, "no raft log reader", nil
	case from > to:
		return 0, fmt.Sprintf("marker %d, records at %d", from, to), nil
	}
	t := &touched{ids: map[string]string{}, users: map[string]bool{}}
	ok, err := s.tail.Tail(from, to, term, t.note)
	switch {
	case err != nil:
		return 0, "", err
	case !ok:
		return 0, fmt.Sprintf("the raft log cannot vouch for entries %d..%d", from+1, to), nil
	case t.whole:
		return 0, "a split in the tail", nil
	}
	for user := range t.users {
		if err := s.noteUser(t, user); err != nil {
			return 0, "", err
		}
	}
	var puts []fulltext.Doc
	var dels []string
	for id, user := range t.ids {
		m, err := s.db.GetMemory(s.shard, user, id)
		switch {
		case errors.Is(err, memory.ErrNotFound):
			dels = append(dels, id)
		case err != nil:
			return 0, "", err
		default:
			puts = append(puts, toDoc(m))
		}
	}
	if _, err := applyChunked(s.text, puts, dels, to, nil); err != nil {
		return 0, "", err
	}
	return len(t.ids), "", nil
}

// noteUser adds every memory of user that bleve or the records hold, so each is re-indexed or deleted.
func (s *ShardIndex) noteUser(t *touched, user string) error {
	ids, err := s.text.UserIDs(user)
	if err != nil {
		return err
	}
	for _, id := range ids {
		t.ids[id] = user
	}
	return s.db.ScanUser(s.shard, user, func(m memory.Memory) bool {
		t.ids[m.ID] = user
		return true
	})
}
