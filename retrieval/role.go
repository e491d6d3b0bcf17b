package retrieval

// SetLeader tells the indexes whether this replica leads its shard: a leader serves linearizable reads and keeps
// its full-text index close behind; a follower batches full-text work more (see textFeeder).
func (s *ShardIndex) SetLeader(leader bool) {
	s.mu.RLock()
	f := s.feed
	s.mu.RUnlock()
	f.setLeader(leader)
}

// Memories is how many memory records the indexes hold (every record of the shard once loaded).
func (s *ShardIndex) Memories() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.attrs)
}

// Unsearchable is how many memories have no vector a search may compare: an embedding of another model (to be
// re-embedded) or of another dimension. A re-embedding pass skips a shard where it is 0 instead of reading every
// record. Attributes and vectors change one after the other, so the count can be off while a write applies.
func (s *ShardIndex) Unsearchable() int { return max(0, s.Memories()-s.vec.Len()) }
