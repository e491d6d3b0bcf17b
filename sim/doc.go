// Package sim runs one shard's raft group in process over a fault-injecting in-memory transport, replaying seeded fault schedules and checking linearizability and replica convergence (see DESIGN.md).
package sim
