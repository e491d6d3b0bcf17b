// Package fulltext is a per-shard bleve index with BM25 ranking over memory records, searched within one user.
package fulltext
