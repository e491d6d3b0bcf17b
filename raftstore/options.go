package raftstore

// Options configures a Store. The zero value is the production default.
type Options struct {
	// NoSync disables the fsync after StoreLogs, DeleteRange and Set.
	// Raft assumes an acknowledged write is durable (a vote or an appended
	// entry must survive a crash), so only tests and benchmarks that
	// measure the cost of durability should set it. It is inverted ("No")
	// so that a zero Options is durable: a forgotten field must not
	// silently drop fsync.
	NoSync bool
}

// DefaultOptions returns the defaults: fsync on every write.
func DefaultOptions() Options { return Options{} }
