// Package retrieval is the read path: hybrid vector + BM25 search over a shard's indexes, with filters, fusion
// and recency.
package retrieval
