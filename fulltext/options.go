package fulltext

import (
	"fmt"
	"time"
)

// Analyzers accepted by Options.Analyzer.
const (
	// AnalyzerEnglish lower-cases, strips possessives and stop words, and porter-stems. Default:
	// it ranked better on the sample in DESIGN.md because memories and queries word things
	// differently ("deploy" vs "deployed").
	AnalyzerEnglish = "en"
	// AnalyzerStandard lower-cases and strips stop words, without stemming.
	AnalyzerStandard = "standard"
)

// Options configures Open. Zero fields take the defaults noted.
type Options struct {
	// InMemory keeps the index in RAM only (scorch without a path); dir is ignored.
	InMemory bool
	// Analyzer for the text (and entity text) field: AnalyzerEnglish (default) or AnalyzerStandard.
	// It is part of the mapping, so changing it makes Open return ErrOutdated.
	Analyzer string
	// MaxBatch bounds puts+deletes in one Apply (default 4096). Apply never splits a call, since
	// that would break its atomicity, so a larger call is rejected instead.
	MaxBatch int
	// DefaultK is used when Query.K is zero (default 10).
	DefaultK int
	// MaxK bounds Query.K (default 1000): the collector keeps K hits in a heap.
	MaxK int
	// NoSync lets Apply return once the batch is searchable rather than once it is persisted
	// (scorch "unsafe_batch"). Scorch persists snapshots in order, so a crash loses a suffix of
	// batches together with the markers written in them; safe if the owner replays from the
	// applied-index marker. Ignored when InMemory.
	NoSync bool
	// PersisterNap is how long scorch's persister waits to gather in-memory segments before writing them,
	// merged, to disk (default 1s with NoSync, none without; negative disables). Searches see a batch at once
	// either way. Without NoSync every Apply waits for the persister, so a nap would be added to each one.
	PersisterNap time.Duration
	// MaxSegmentsPerTier lets this many segments accumulate in a tier before scorch merges them (default 20;
	// bleve's own is 10). Higher means less merge work on write-heavy shards and a little more per search.
	MaxSegmentsPerTier int
	// SettleAfter: an on-disk index that has taken no batch for this long, and holds more than SettleAbove
	// segments, is merged down to a few (settle.go), once per spell of writes (default 30s; negative: never).
	// A search looks up each of its terms in every segment, so a small user's search in a shard of 200,000
	// memories cost twice as much over the 20-odd segments the tiered policy leaves.
	SettleAfter time.Duration
	// SettleAbove is the segment count an idle index is settled above, and settled down to (default 4).
	SettleAbove int
	// SettleShare: an idle index of fewer segments is also settled, into one, when the segments other than its
	// largest hold at least this share of its documents (default 0.1; negative: never). Each segment a
	// search visits costs it a dictionary look-up per word; the share bounds how often a whole-index merge
	// runs for the few documents a quiet shard takes.
	SettleShare float64
	// Settlers, when set, bounds how many indexes sharing it settle at once (NewSettlers); nil: no bound.
	Settlers *Settlers
	// settleHold bounds how long one Settle holds its turn of Settlers (default settleHoldDefault; tests
	// shorten it). scorch retries a failing merge forever, and one such index must not stop its node's others.
	settleHold time.Duration
	// eventCallback names a scorch event callback (scorch.RegistryEventCallbacks); tests use it to stall merges.
	eventCallback string
	// conjoinUser makes the plain query keep the user's documents by a conjunction with the user term instead
	// of userFilter, as before the filter: benchmarks compare the two in one run.
	conjoinUser bool

	// Query shaping (see DESIGN.md, "Query shaping"). The query text is analysed once, repeated terms
	// are dropped, and each term's document frequency (df) among the user's documents is looked up.

	// MaxQueryTerms keeps at most this many distinct query terms, the rarest (highest idf) first
	// (default 16; negative: no cap). Agents sometimes pass a whole message as the query.
	MaxQueryTerms int
	// CommonTermFraction: a term whose df exceeds this fraction of the user's docs (and
	// CommonTermMinDF) is "common". When a query has both rare and common terms, only docs matching
	// a rare term are candidates; common terms still add to their score, which is unchanged (default
	// 0.05; negative: never split). When every term is common the query is a plain OR.
	CommonTermFraction float64
	// CommonTermMinDF: a term with df at most this is never common (default 1000; negative: 0). The
	// split exists to skip long posting lists; below this they are cheap, and small indexes keep
	// the plain OR exactly.
	CommonTermMinDF int
	// DenseMinPostings: a query with no filter but the user (plain or split), whose terms' posting lists hold
	// at least this many postings in all (and one for every 8 documents of the index), is scored term at a
	// time into arrays, with the scores and order bleve gives (DESIGN.md, "Dense queries"); default 8192,
	// negative: never.
	DenseMinPostings int
	// UserPostingsCache bounds the bytes of users' postings this index keeps between searches (userdocs.go): a
	// search reads its user's documents of every segment for its statistics and its filter, and a user
	// searching again finds them read (default 4 MiB, entries' overheads counted; negative: none kept).
	UserPostingsCache int64
	// DecodedPostingsCache bounds the bytes of long posting lists (DecodedPostingsMin postings or more in a
	// segment) this index keeps decoded between dense searches (termcache.go): a large user's common words come
	// back query after query, and walking them through zap's iterator was most of a dense search (default 16
	// MiB, 8 bytes a posting; negative: none kept).
	DecodedPostingsCache int64
	// DecodedPostingsMin: shorter lists are walked through zap's iterator and not kept (default 1024).
	DecodedPostingsMin int
	// Meter sums the two caches' bytes, hits, misses and evictions over the indexes that share it (a node's
	// shards; default: one of this index's own).
	Meter *Meter
}

func (o Options) withDefaults() Options {
	if o.Analyzer == "" {
		o.Analyzer = AnalyzerEnglish
	}
	if o.MaxBatch == 0 {
		o.MaxBatch = 4096
	}
	if o.DefaultK == 0 {
		o.DefaultK = 10
	}
	if o.MaxK == 0 {
		o.MaxK = 1000
	}
	if o.MaxSegmentsPerTier == 0 {
		o.MaxSegmentsPerTier = 20
	}
	if o.SettleAfter == 0 {
		o.SettleAfter = 30 * time.Second
	}
	if o.SettleAbove == 0 {
		o.SettleAbove = 4
	}
	if o.SettleShare == 0 {
		o.SettleShare = 0.1
	}
	if o.settleHold == 0 {
		o.settleHold = settleHoldDefault
	}
	if o.MaxQueryTerms == 0 {
		o.MaxQueryTerms = 16
	}
	if o.CommonTermFraction == 0 {
		o.CommonTermFraction = 0.05
	}
	if o.CommonTermMinDF == 0 {
		o.CommonTermMinDF = 1000
	} else if o.CommonTermMinDF < 0 {
		o.CommonTermMinDF = 0
	}
	if o.DenseMinPostings == 0 {
		o.DenseMinPostings = 8192
	}
	if o.UserPostingsCache == 0 {
		o.UserPostingsCache = 4 << 20
	} else if o.UserPostingsCache < 0 {
		o.UserPostingsCache = 0
	}
	if o.DecodedPostingsCache == 0 {
		o.DecodedPostingsCache = 16 << 20
	} else if o.DecodedPostingsCache < 0 {
		o.DecodedPostingsCache = 0
	}
	if o.DecodedPostingsMin <= 0 {
		o.DecodedPostingsMin = 1024
	}
	if o.Meter == nil {
		o.Meter = NewMeter()
	}
	if o.PersisterNap == 0 && o.NoSync {
		o.PersisterNap = time.Second
	} else if o.PersisterNap < 0 {
		o.PersisterNap = 0
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.Analyzer != AnalyzerEnglish && o.Analyzer != AnalyzerStandard:
		return fmt.Errorf("%w: analyzer %q (want %q or %q)", ErrInvalid, o.Analyzer, AnalyzerEnglish, AnalyzerStandard)
	case o.SettleAbove < 1:
		return fmt.Errorf("%w: SettleAbove %d (want at least 1)", ErrInvalid, o.SettleAbove)
	case o.SettleShare > 1:
		return fmt.Errorf("%w: SettleShare %v (want at most 1)", ErrInvalid, o.SettleShare)
	case o.MaxBatch < 0:
		return fmt.Errorf("%w: MaxBatch %d", ErrInvalid, o.MaxBatch)
	case o.MaxK < 0:
		return fmt.Errorf("%w: MaxK %d", ErrInvalid, o.MaxK)
	case o.DefaultK < 0 || o.DefaultK > o.MaxK:
		return fmt.Errorf("%w: DefaultK %d (want 1..MaxK %d)", ErrInvalid, o.DefaultK, o.MaxK)
	}
	return nil
}
