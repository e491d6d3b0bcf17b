package raftstore

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// Missing stable keys read as (nil, nil) and (0, nil), as the
// raft.StableStore documentation asks. raft also tolerates an error whose
// text is exactly "not found" (raft-boltdb's convention), but any wrapped
// variant of it would abort NewRaft, so we do not return one.

// Set implements raft.StableStore.
func (s *Store) Set(key, val []byte) error {
	s.countSync(1)
	if err := s.db.Set(s.keys.stableKey(key), val, s.wo); err != nil {
		return fmt.Errorf("set %q: %w", key, err)
	}
	return nil
}

// Get implements raft.StableStore. It returns nil for a missing key and a
// non-nil (possibly empty) copy for a present one.
func (s *Store) Get(key []byte) ([]byte, error) {
	v, closer, err := s.db.Get(s.keys.stableKey(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get %q: %w", key, err)
	}
	defer closer.Close()
	return append(make([]byte, 0, len(v)), v...), nil
}

// SetUint64 implements raft.StableStore, as 8 big-endian bytes.
func (s *Store) SetUint64(key []byte, val uint64) error {
	return s.Set(key, binary.BigEndian.AppendUint64(nil, val))
}

// GetUint64 implements raft.StableStore; a missing key is 0.
func (s *Store) GetUint64(key []byte) (uint64, error) {
	v, err := s.Get(key)
	if err != nil || v == nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("get uint64 %q: %d bytes: %w", key, len(v), ErrCorrupt)
	}
	return binary.BigEndian.Uint64(v), nil
}
