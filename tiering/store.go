package tiering

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// SegmentStore holds cold segments by key. Implementations are safe for concurrent use, write a key
// atomically (a reader sees all of its bytes or none) and refuse keys ValidKey refuses with ErrBadKey.
type SegmentStore interface {
	// Put stores data under key. Segments are immutable: putting the same bytes again succeeds (a retried
	// upload), putting different bytes under an existing key fails with ErrConflict and changes nothing.
	// When Put returns nil the bytes are durable as far as the backend can promise.
	Put(ctx context.Context, key string, data []byte) error
	// Get returns the bytes under key, or an error wrapping ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// Delete removes key; deleting a missing key succeeds.
	Delete(ctx context.Context, key string) error
	// List returns every key that starts with prefix, sorted.
	List(ctx context.Context, prefix string) ([]string, error)
}

// MemStore is a SegmentStore in memory, for tests and single-process tools.
type MemStore struct {
	mu   sync.RWMutex
	data map[string][]byte
}

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore { return &MemStore{data: map[string][]byte{}} }

// Put implements SegmentStore.
func (s *MemStore) Put(ctx context.Context, key string, data []byte) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.data[key]; ok {
		if !bytes.Equal(old, data) {
			return fmt.Errorf("put %s: %w", key, ErrConflict)
		}
		return nil
	}
	s.data[key] = bytes.Clone(data)
	return nil
}

// Get implements SegmentStore.
func (s *MemStore) Get(ctx context.Context, key string) ([]byte, error) {
	if err := ValidKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	b, ok := s.data[key]
	if !ok {
		return nil, fmt.Errorf("get %s: %w", key, ErrNotFound)
	}
	return bytes.Clone(b), nil
}

// Delete implements SegmentStore.
func (s *MemStore) Delete(ctx context.Context, key string) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.data, key)
	return nil
}

// List implements SegmentStore.
func (s *MemStore) List(ctx context.Context, prefix string) ([]string, error) {
	if err := ValidPrefix(prefix); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for k := range s.data {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out, nil
}
