// Package chaos is the fault-injection campaign of memcluster (issue 6, "Faults"): a real 3-process cluster,
// concurrent clients with recorded histories, a seeded nemesis that SIGKILLs/restarts and SIGSTOP/SIGCONTs
// nodes, and a linearizability check of every history with porcupine. See chaos_test.go; run it with
// `make chaos-short` or `make chaos SCHEDULES=20 DURATION=60s`.
package chaos
