# memcluster — the two commands a newcomer needs are `make run` and `make test`.
GO       ?= go
BIN      := bin
PKGS_RACE := ./cluster/... ./storage/... ./raftstore/...
# The cluster package's tests are multi-node scenarios that mostly wait on raft and gossip timers: they run once,
# in the race pass, rather than twice.
PKGS_NORACE = $(shell $(GO) list ./... | grep -v '/cluster$$')
# VERSION (default: the VERSION file, if any; else the binaries say "dev") and COMMIT are linked into both binaries.
VERSION  ?= $(shell cat VERSION 2>/dev/null)
COMMIT   ?= $(shell git rev-parse HEAD 2>/dev/null)
BUILDPKG := github.com/memcluster/memcluster/internal/buildinfo
LDFLAGS  := -X $(BUILDPKG).Commit=$(COMMIT) $(if $(VERSION),-X $(BUILDPKG).Version=$(VERSION))
IMAGE    ?= memcluster

.PHONY: all build run test test-short race vet bench clean cluster cluster-stop fuzz-short image

all: build

build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS) $(LDFLAGS_EXTRA)" -o $(BIN)/memnode ./cmd/memnode
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS) $(LDFLAGS_EXTRA)" -o $(BIN)/memctl ./cmd/memctl

# The container image (FROM scratch: the static binaries of `make build`, nothing else): memcluster:dev, and
# memcluster:$(VERSION) when there is a version. `docker compose -f deploy/compose.yaml up -d` runs 3 nodes of it.
# The binaries are linked without symbol tables and DWARF (-s -w: 53 MB instead of 76; stack traces keep names).
image:
	$(MAKE) --no-print-directory build LDFLAGS_EXTRA="-s -w"
	rm -rf $(BIN)/image && mkdir -p $(BIN)/image/root/etc/ssl/certs $(BIN)/image/user/data $(BIN)/image/user/tmp
	chmod 1777 $(BIN)/image/user/tmp
	if [ -f /etc/ssl/certs/ca-certificates.crt ]; then cp /etc/ssl/certs/ca-certificates.crt $(BIN)/image/root/etc/ssl/certs/; fi
	docker build -t $(IMAGE):dev $(if $(VERSION),-t $(IMAGE):$(VERSION)) .

# One node on embedded defaults: HTTP on 127.0.0.1:7480, data in ./memdata.
run: build
	./$(BIN)/memnode --dev --node-id dev --data-dir ./memdata

vet:
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

# The whole suite: unit and end-to-end tests on real processes, then the multi-node Raft tests of the cluster
# package (and storage's again) under the race detector, then short fuzz runs.
test: build vet
	# -p 1: the cluster and end-to-end packages run many Raft nodes and processes; on a 2-core machine they
	# must not starve each other's election timers.
	# scripts/gotest.sh is go test that repeats, at the end of a failure's output, which test failed or hung.
	GO=$(GO) scripts/gotest.sh -count=1 -p 1 -timeout 20m $(PKGS_NORACE)
	GO=$(GO) scripts/gotest.sh -count=1 -p 1 -race -timeout 20m $(PKGS_RACE)
	# The raft fork's commitment (third_party/raft/MEMCLUSTER.md), a module of its own.
	cd third_party/raft && GO=$(GO) ../../scripts/gotest.sh -count=1 -race -run '^TestCommitment' .
	$(MAKE) fuzz-short

# Each fuzz target for a decoder of outside bytes, briefly (committed seeds in */testdata/fuzz run in `go test`
# too). The budgets are execution counts, about 5 s of each target on the CI machine, not durations: with a
# duration, Go 1.26's fuzz coordinator can fail a clean run with "context deadline exceeded" as the time runs out
# (go.dev/issue/75804, fixed in Go 1.27). FUZZTIME=10m (every target) for a real campaign.
FUZZTIME ?=
FUZZ_TARGETS := storage:FuzzDecodeCommand:80000x storage:FuzzDecodeMemory:80000x storage:FuzzDecodeMemoryKey:60000x \
	storage:FuzzRecordJSONMatchesEncodingJSON:60000x storage:FuzzRestore:4000x tiering:FuzzDecodeSegment:30000x \
	retrieval:FuzzParseTimeRange:20000x server:FuzzDecodeBody:15000x server:FuzzRouteAuthorization:5000x \
	cmd/memctl:FuzzReadSamples:20000x storage:FuzzBinaryRecordReadsAsItsJSONTwin:15000x \
	internal/httpjson:FuzzReadMatchesEncodingJSON:30000x
fuzz-short:
	for t in $(FUZZ_TARGETS); do p=$${t%%:*}; r=$${t#*:}; f=$${r%%:*}; n=$${r#*:}; \
		$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(if $(FUZZTIME),$(FUZZTIME),$$n) ./$$p/ || exit 1; done

# The console's browser test (headless Chromium against 3 memnode processes), saving its screenshots over the
# ones the README shows.
.PHONY: console-shots
console-shots:
	MEMCLUSTER_CONSOLE_SHOTS=$(CURDIR)/docs/console $(GO) test -count=1 -timeout 5m -run '^TestConsoleInABrowser$$' ./e2e/

test-short:
	$(GO) test -short -count=1 ./...

# Every performance figure in one run (bench/run.sh says which): Go benchmarks, the search peers (chromem-go, plain
# bleve, memory bandwidth), 3-replica writes against etcd in 5 s bursts and one sustained 120 s run a side,
# consolidation, the footprint and recovery at 1,000,000 memories, search at 100k through 3 nodes, LongMemEval;
# about 45 minutes at REPS=5. Rewrites the peers section of
# docs/benchmarks.md (with the table of the performance aims) and its plots. Knobs: REPS (3), DUR (5s), SKIP_…
# (bench/run.sh's header lists them); results in bench/out/.
bench:
	GO=$(GO) bench/run.sh

clean:
	rm -rf $(BIN) memdata

# A local 3-node cluster on loopback (HTTP 7480, 7490, 7500); `make cluster-stop` ends it.
cluster: build
	scripts/cluster.sh start

cluster-stop:
	scripts/cluster.sh stop

# Fault injection (issue 6): a 3-process cluster, concurrent clients with recorded histories, a seeded nemesis
# (SIGKILL + restart, SIGSTOP/SIGCONT, partitions and one-way drops in network namespaces, clock steps, a node
# dead past its timeout, a node joining), porcupine linearizability checks, a lost-write check and replica
# comparison. Ends with one
# line `chaos: schedules=N ops=M violations=V lost=L`; a failure prints the seed and the command that replays it.
# chaos-short: 3 schedules of 20s (~2 minutes). chaos: SCHEDULES, DURATION, SEED (0 = from the clock), CLIENTS.
SCHEDULES ?= 20
DURATION  ?= 60s
SEED      ?= 0
CLIENTS   ?= 4
.PHONY: chaos chaos-short
chaos:
	MEMCLUSTER_CHAOS=1 $(GO) test -count=1 -v -timeout 0 -run '^TestChaos$$' ./chaos/ \
		-chaos.schedules=$(SCHEDULES) -chaos.duration=$(DURATION) -chaos.seed=$(SEED) -chaos.clients=$(CLIENTS)

chaos-short:
	MEMCLUSTER_CHAOS=1 $(GO) test -count=1 -v -timeout 10m -run '^TestChaos$$' ./chaos/ \
		-chaos.schedules=3 -chaos.duration=20s -chaos.seed=$(SEED)

# chaos-crash: CYCLES rounds of SIGKILL-every-node + restart under heavy writes, then the same checks
# (`chaos-crash: cycles=N ops=M acked=A violations=V lost=L`). 4-8 s per cycle at first, growing with the data:
# every restart after SIGKILL rebuilds the bleve indexes.
CYCLES ?= 100
.PHONY: chaos-crash
chaos-crash:
	MEMCLUSTER_CHAOS=1 $(GO) test -count=1 -v -timeout 0 -run '^TestCrashCycles$$' ./chaos/ \
		-chaos.crash-cycles=$(CYCLES) -chaos.seed=$(SEED) -chaos.clients=$(CLIENTS)

# chaos-failover: TRIALS SIGKILLs of a shard leader, timing the first write acknowledged after each
# (`failover: trials=N median=… p99=… max=… within_2x_election_timeout=K/N`).
TRIALS ?= 30
.PHONY: chaos-failover
chaos-failover:
	MEMCLUSTER_CHAOS=1 $(GO) test -count=1 -v -timeout 0 -run '^TestLeaderFailover$$' ./chaos/ \
		-chaos.failover-trials=$(TRIALS)

# sim: the in-process campaign, seeds FIRST .. FIRST+SEEDS-1, in chunks of 100 so a long campaign shows
# progress (~36 s per chunk on 2 cores); each chunk ends with its tally line.
SEEDS ?= 1000
FIRST ?= 1
.PHONY: sim
sim:
	@f=$(FIRST); end=$$(( $(FIRST) + $(SEEDS) )); while [ $$f -lt $$end ]; do \
		n=$$(( end - f < 100 ? end - f : 100 )); \
		out=$$($(GO) test -count=1 -timeout 0 -parallel 4 -run '^TestSimSchedules$$' ./sim/ -sim.first=$$f -sim.seeds=$$n -v 2>&1); \
		rc=$$?; echo "$$out" | grep -E 'seeds in|KNOWN UPSTREAM'; \
		if [ $$rc -ne 0 ]; then echo "$$out" | grep -v '^=== ' | tail -80; exit 1; fi; \
		f=$$(( f + 100 )); done

# sim-raft697 replays the in-process schedules that reproduced hashicorp/raft#697 (open upstream: a follower
# stuck after installing a snapshot, or panicking) and a campaign on raft's monotonic-store path, where the bug
# was most frequent. They pass since the fork's fix (third_party/raft/MEMCLUSTER.md); see sim/DESIGN.md.
.PHONY: sim-raft697
sim-raft697:
	$(GO) test -count=20 -run '^TestSimSchedules$$' ./sim/ -sim.seed=15 -sim.moves=0 -sim.diskfaults=0
	$(GO) test -count=20 -run '^TestSimSchedules$$' ./sim/ -sim.seed=102 -sim.monotonic -sim.moves=0 -sim.diskfaults=0
	$(GO) test -count=1 -parallel 4 -run '^TestSimSchedules$$' ./sim/ -sim.seeds=100 -sim.monotonic
