package cluster

import (
	"runtime"
	"sync"
)

// indexesAhead opens the indexes of replicas about to start, a few at a time, while the replicas start one by
// one in shard order (startMu): a restart's time goes mostly to loading each shard's vectors and attributes
// from its records, work that one shard does not spread over every core and that does not depend on the raft
// groups started before it.
type indexesAhead struct {
	factory IndexFactory
	mu      sync.Mutex
	opens   map[uint32]*indexOpen
	wg      sync.WaitGroup
}

type indexOpen struct {
	shard uint32
	done  chan struct{}
	idx   ShardIndex
	err   error
	taken bool // a replica start asked for it (under indexesAhead.mu)
}

// openIndexesAhead starts opening the indexes of shards, in their order, at most max(2, GOMAXPROCS/2) at once.
// Every index it opens goes either to a replica start, through opener, or to close.
func openIndexesAhead(factory IndexFactory, shards []uint32) *indexesAhead {
	a := &indexesAhead{factory: factory, opens: make(map[uint32]*indexOpen, len(shards))}
	if factory == nil || len(shards) == 0 {
		return a
	}
	next := make(chan *indexOpen, len(shards))
	for _, s := range shards {
		o := &indexOpen{shard: s, done: make(chan struct{})}
		a.opens[s] = o
		next <- o
	}
	close(next)
	for range min(len(shards), max(2, runtime.GOMAXPROCS(0)/2)) {
		a.wg.Go(func() {
			for o := range next {
				o.idx, o.err = factory(o.shard)
				close(o.done)
			}
		})
	}
	return a
}

// opener is the index factory a replica start uses: it hands over the index opened ahead for the shard
// (waiting for it), and opens any other shard's as the node's factory does.
func (a *indexesAhead) opener(shard uint32) (ShardIndex, error) {
	a.mu.Lock()
	o := a.opens[shard]
	if o != nil {
		if o.taken { // asked twice: the first start owns it
			o = nil
		} else {
			o.taken = true
		}
	}
	a.mu.Unlock()
	if o == nil {
		if a.factory == nil {
			return nil, nil
		}
		return a.factory(shard)
	}
	<-o.done
	return o.idx, o.err
}

// close waits for the opens under way and closes every index opened ahead that no replica start took (a start
// that failed before asking, or found its replica running).
func (a *indexesAhead) close() {
	a.wg.Wait()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, o := range a.opens {
		if !o.taken && o.err == nil && o.idx != nil {
			_ = o.idx.Close()
		}
	}
}
