package storage

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/memcluster/memcluster/memory"
)

// scanBatch is how many records travel together between the stages of a parallel scan: enough to make a
// channel send cheap beside the decoding, few enough that the stages stay busy at once.
const scanBatch = 256

// rawBatch holds copies of consecutive records (the iterator reuses its buffers): keys and values cut out of one
// buffer, so a batch is one allocation.
type rawBatch struct {
	seq  int
	buf  []byte
	ends []int // record i: key buf[ends[2i-1]:ends[2i]], value buf[ends[2i]:ends[2i+1]] (ends[-1] = 0)
}

func (b *rawBatch) add(k, v []byte) {
	b.buf = append(b.buf, k...)
	b.ends = append(b.ends, len(b.buf))
	b.buf = append(b.buf, v...)
	b.ends = append(b.ends, len(b.buf))
}

func (b *rawBatch) len() int { return len(b.ends) / 2 }

// decode decodes the records of the batch up to a bad one, which fails the scan with its key named (as scan
// does) once fn has seen the records before it.
func (b *rawBatch) decode() decodedBatch {
	out := decodedBatch{seq: b.seq, ms: make([]memory.Memory, 0, b.len())}
	start := 0
	for i := 0; i < len(b.ends); i += 2 {
		k, v := b.buf[start:b.ends[i]], b.buf[b.ends[i]:b.ends[i+1]]
		start = b.ends[i+1]
		m, err := DecodeMemory(v)
		if err != nil {
			out.err = fmt.Errorf("scan %x: %w", k, err)
			return out
		}
		out.ms = append(out.ms, m)
	}
	return out
}

type decodedBatch struct {
	seq int
	ms  []memory.Memory
	err error
}

// scanParallel is scan for bulk reads (a shard's whole index rebuilt on open): one goroutine walks the keys and
// copies the records in batches, GOMAXPROCS workers (at most 8) decode them (JSON, most of a record's cost), and
// fn sees the memories on the caller's goroutine in key order, as with scan. fn returning false stops the scan.
// Every way out, a panic in fn included, waits for the walker and the workers, so the iterator is closed when it
// returns.
func (d *DB) scanParallel(lo, hi []byte, fn func(memory.Memory) bool) error {
	ctx, cancel := context.WithCancel(context.Background())
	workers := min(max(runtime.GOMAXPROCS(0), 1), 8)
	raw := make(chan *rawBatch, workers)
	out := make(chan decodedBatch, workers)
	// inFlight bounds the batches walked but not yet handed to fn, so the batches that finish before the one fn
	// waits for cannot pile up.
	inFlight := make(chan struct{}, 4*workers)
	defer func() {
		cancel()
		for range out { // the stages end once cancelled; out closes after the walker and every worker
		}
	}()
	var iterErr error // written by the walker before it closes raw; read after out is closed
	go func() {
		defer close(raw)
		iterErr = d.walk(ctx, lo, hi, raw, inFlight)
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range raw {
				select {
				case out <- b.decode():
				case <-ctx.Done():
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	stopped, err := consumeInOrder(out, inFlight, fn)
	if err != nil || stopped {
		return err
	}
	return iterErr // out is closed: the walker is done
}

// walk sends the records of [lo, hi) in batches until the range ends or ctx is done; a batch waits for a place
// in inFlight. The records read before an iterator error are sent before it is returned, as scan hands them on.
func (d *DB) walk(ctx context.Context, lo, hi []byte, raw chan<- *rawBatch, inFlight chan<- struct{}) error {
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return err
	}
	defer it.Close()
	send := func(b *rawBatch) bool {
		select {
		case inFlight <- struct{}{}:
		case <-ctx.Done():
			return false
		}
		select {
		case raw <- b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	b := &rawBatch{}
	for ok := it.First(); ok; ok = it.Next() {
		b.add(it.Key(), it.Value())
		if b.len() < scanBatch {
			continue
		}
		if !send(b) {
			return nil
		}
		b = &rawBatch{seq: b.seq + 1, buf: make([]byte, 0, len(b.buf)), ends: make([]int, 0, 2*scanBatch)}
	}
	if b.len() > 0 && !send(b) {
		return nil
	}
	return it.Error()
}

// consumeInOrder hands the decoded batches to fn in their order of sequence (workers finish out of order), frees
// a place in inFlight for each, and reports a decode error or fn's stop.
func consumeInOrder(out <-chan decodedBatch, inFlight <-chan struct{}, fn func(memory.Memory) bool) (stopped bool, err error) {
	pending := map[int]decodedBatch{}
	next := 0
	for b := range out {
		pending[b.seq] = b
		for {
			nb, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			<-inFlight
			for _, m := range nb.ms {
				if !fn(m) {
					return true, nil
				}
			}
			if nb.err != nil {
				return true, nb.err
			}
		}
	}
	return false, nil
}
