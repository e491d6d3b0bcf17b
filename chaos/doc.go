// Package chaos is the fault-injection campaign of memcluster ("Faults"). Everything is in the tests;
// they run real memnode processes and skip unless MEMCLUSTER_CHAOS=1, CI=true or a -chaos.* flag is given.
//
// Network. By default (-chaos.net=auto) every node runs in its own Linux network namespace: a hub namespace
// holds a bridge, each node's namespace has a veth into it with 10.77.<run>.<i>/24, and an uplink veth gives
// the test process 10.77.<run>.254 to reach every node. Names carry the test's pid and a run number, so parallel
// runs do not collide and leftovers of aborted runs are removed at the next start; t.Cleanup removes the
// namespaces (and with them veths, bridge and rules), and nodes die with the test process (Pdeathsig). Without
// root or iproute2/iptables, auto falls back to -chaos.net=loopback (127.0.0.1, no partition faults) with a
// message, -chaos.net=netns skips, and CI=true fails.
//
// TestChaos: 3 nodes (4 shards, 3 replicas, --dead-node-timeout from -chaos.dead-node-timeout) plus a spare;
// concurrent clients put/get/delete with recorded histories while a nemesis, planned from the seed alone,
// applies one fault at a time, each healed before the next:
//
//   - kill: SIGKILL a node, restart it (without --join) after a hold
//   - pause: SIGSTOP, then SIGCONT
//   - isolate: iptables rules in the node's namespace drop its traffic to and from every peer
//   - split: the same between a minority and the majority
//   - oneway: drop what node A sends to node B (OUTPUT rule in A), B→A still flows
//   - clock: restart a node with another hidden --clock-offset (±30 s to ±5 min, or back to 0), which is how a
//     wall-clock step looks to the process
//   - dead: SIGKILL a node past the dead-node timeout, wait until its replicas are re-placed, restart it
//   - join: start the spare with --join; the dead fault that always follows gives it replicas (placement fills
//     shards that lack replicas, it does not rebalance)
//
// Kinds are dealt from shuffled decks; consecutive seeds open with different kinds, so a 3-schedule campaign
// sees every kind. Clients reach every node in every fault (partitions are between nodes), so a minority
// node that answers what it should not is caught.
//
// Beside them, session clients (-chaos.session-clients, 2) append one message at a time to sessions they share
// (16 appends a session, within the 20-message window) and read sessions back. An append is a read-modify-write
// of the session record committed on the user's revision, its first decision on unconfirmed reads: every session
// an append or a read answers must hold each append acknowledged before that call began and none that definitely
// failed (a violation), and after healing every session is read through every member (an acknowledged append
// missing there is lost).
//
// Checks after healing: every acknowledged id is read through every node; the history is checked with
// porcupine (per-id register model, unknown outcomes pending); acknowledged puts never deleted must be found
// (lost); and, with no digest endpoint in the server, replicas are compared through the internal API: every
// placed replica of a shard must reach the same applied index, and its local copy (stale read, never
// forwarded) of every id must be byte-identical JSON, or 404 on all. Divergent ids count as violations.
//
// TestCrashCycles: 8 clients, mostly puts; each cycle SIGKILLs all three nodes at seeded moments, restarts
// them, and waits for health; after -chaos.crash-cycles cycles the same checks run.
//
// Output: TestChaos ends with `chaos: schedules=N ops=M violations=V lost=L`, after a line with fault counts
// per kind; TestCrashCycles prints `chaos-crash: cycles=N ops=M acked=A violations=V lost=L`. A failure
// prints its seed and the command that replays it. -chaos.plant-anomaly turns one final read into a 404 to show
// the checks catch it. Run with `make chaos-short`, `make chaos SCHEDULES=20 DURATION=60s` or
// `make chaos-crash CYCLES=100`.
package chaos
