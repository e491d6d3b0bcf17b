// Package backup owns the cluster backup file: a versioned, checksummed, streamed format (write, read, verify) that knows nothing of Raft.
package backup
