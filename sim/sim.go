package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// Options configures one simulated run. Everything random is drawn from Seed.
type Options struct {
	// Seed decides the replica count (unless Nodes is set), the fault schedule and every client operation.
	Seed uint64
	// Nodes is the replica count, 1 to 5; default 0 lets the seed choose 3 or 5.
	Nodes int
	// Clients issue operations concurrently; default 3.
	Clients int
	// Users are the user ids the clients touch; default 3.
	Users int
	// OpsPerClient is each client's planned operation count; default 40.
	OpsPerClient int
	// Steps is the fault schedule's length; default 8 (each step lasts 60-250ms).
	Steps int
	// RetryAmbiguousPuts retries a put after an ambiguous failure (leadership lost in flight), as cluster's router
	// does; default false: such a put is recorded as unknown.
	RetryAmbiguousPuts bool
	// ForceMonotonic declares the log store monotonic to raft, so that after installing a snapshot raft wipes the
	// log instead of compacting it; default false (raftstore answers false, as production uses it). It
	// reproduces the panic of hashicorp/raft#697 (DESIGN.md).
	ForceMonotonic bool
	// Moves is how many replica moves run during the schedule (a spare joins as a non-voter, is promoted once
	// caught up, then an old voter is removed); default 0. With moves the group has one spare replica, and the
	// network faults reach it too.
	Moves int
	// DiskFaults is how many times during the schedule the replica that leads refuses to write its raft log for
	// 20–150 ms (disk.go); default 0.
	DiskFaults int
	// Bugs plants deliberate faults for the self-test; default none.
	Bugs Bugs
	// Logger receives raft's errors and the harness's warnings; default discards.
	Logger *slog.Logger
}

func (o Options) validate() error {
	switch {
	case o.Nodes < 0 || o.Nodes > maxVoters:
		return fmt.Errorf("%w: Nodes %d, want 1 to %d (0: the seed chooses)", ErrBadOptions, o.Nodes, maxVoters)
	case o.Clients < 0, o.Users < 0, o.OpsPerClient < 0, o.Steps < 0, o.Moves < 0, o.DiskFaults < 0:
		return fmt.Errorf("%w: negative count in %+v", ErrBadOptions, o)
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.Clients == 0 {
		o.Clients = 3
	}
	if o.Users == 0 {
		o.Users = 3
	}
	if o.OpsPerClient == 0 {
		o.OpsPerClient = 40
	}
	if o.Steps == 0 {
		o.Steps = 8
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Result is what a run did and saw; it is filled as far as the run got, also when Run fails.
type Result struct {
	Seed     uint64
	Plan     []string // the replica count and the planned fault steps (a function of the seed)
	Events   []string // what the nemesis did when, with the node it isolated
	History  []porcupine.Operation
	Unknown  int      // operations recorded with an unknown outcome
	Digests  []Digest // per replica, after convergence
	Replays  []ReplayStats
	Net      NetStats
	Lin      porcupine.LinearizationInfo // for porcupine.Visualize
	Duration time.Duration
}

// runTimeout bounds a whole run; a run that hits it reports which phase hung.
const runTimeout = 60 * time.Second

// convergeTimeout bounds the wait for a healed cluster to agree; elections on a healed in-memory network take
// tens of milliseconds, so this only trips on a liveness bug.
const convergeTimeout = 10 * time.Second

// Run builds the cluster, runs the seed's schedule and operations, heals, and checks the history and the replicas.
// The error joins every violation found (ErrNotLinearizable, ErrDiverged, ...).
func Run(opts Options) (*Result, error) {
	if err := opts.validate(); err != nil {
		return &Result{Seed: opts.Seed}, err
	}
	opts = opts.withDefaults()
	start := time.Now()
	p := makePlan(opts)
	res := &Result{Seed: opts.Seed, Plan: p.describe()}
	defer func() { res.Duration = time.Since(start) }()
	c, err := newCluster(p.nodes, p.spares, opts, opts.Bugs.wrap())
	if err != nil {
		return res, err
	}
	defer c.close()
	defer func() { res.Net = c.net.Stats() }()
	if err := c.converge(convergeTimeout); err != nil {
		return res, fmt.Errorf("initial election: %w", err)
	}
	mv := &mover{c: c, voters: p.nodes}
	rec := exercise(c, p, opts, res, mv)
	res.History = rec.ops
	if len(p.moves) > 0 {
		err := mv.finish(convergeTimeout)
		res.Events = append(res.Events, mv.events...)
		if err != nil {
			return res, errors.Join(err, checkHistory(res))
		}
	}
	if err := c.converge(convergeTimeout); err != nil {
		// The history recorded so far is still checked: a stuck follower (hashicorp/raft#697) must not hide a
		// linearizability violation.
		return res, errors.Join(fmt.Errorf("after heal: %w", err), checkHistory(res))
	}
	finalReads(c, p, opts, rec)
	if err := c.converge(convergeTimeout); err != nil {
		return res, fmt.Errorf("after final reads: %w", err)
	}
	members := c.members()
	c.stopRaft()
	res.History = rec.ops
	return res, errors.Join(c.halted(), checkHistory(res), checkReplicas(members, res, opts.Logger))
}

// exercise runs the nemesis and the clients concurrently and returns the recorded history.
func exercise(c *cluster, p plan, opts Options, res *Result, mv *mover) *recorder {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	rec := &recorder{start: time.Now()}
	var wg sync.WaitGroup
	mv.start = rec.start
	schedCtx, schedDone := context.WithCancel(ctx)
	wg.Go(func() { defer schedDone(); res.Events = runSchedule(ctx, c, p.steps, rec.start) })
	if len(p.moves) > 0 {
		wg.Go(func() { mv.run(schedCtx, p.moves) }) // a move still under way when the faults end is finished after
	}
	var diskEvents []string
	if len(p.disk) > 0 {
		wg.Go(func() { diskEvents = runDiskFaults(schedCtx, c, p.disk, rec.start) })
	}
	for i, ops := range p.clients {
		cl := &client{id: i, c: c, rec: rec, opts: opts}
		wg.Go(func() { cl.run(ctx, ops) })
	}
	wg.Wait()
	res.Events = append(res.Events, diskEvents...)
	return rec
}

// finalReads reads every user once more on the healed cluster, so a lost write shows even if no client read
// after it.
func finalReads(c *cluster, p plan, opts Options, rec *recorder) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cl := &client{id: len(p.clients), c: c, rec: rec, opts: opts}
	for _, u := range p.users {
		cl.do(ctx, input{Kind: opGet, User: u})
	}
}

func checkHistory(res *Result) error {
	for _, op := range res.History {
		if op.Output.(output).Unknown {
			res.Unknown++
		}
	}
	r, info := porcupine.CheckOperationsVerbose(userModel, res.History, 30*time.Second)
	res.Lin = info
	switch r {
	case porcupine.Ok:
		return nil
	case porcupine.Illegal:
		return fmt.Errorf("%w (%d operations)", ErrNotLinearizable, len(res.History))
	}
	return fmt.Errorf("%w: porcupine timed out on %d operations", ErrNotLinearizable, len(res.History))
}

// checkReplicas compares the converged replicas' keyspaces with each other and with a rebuild of each from its
// own snapshot and log.
func checkReplicas(members []*replica, res *Result, log *slog.Logger) error {
	var errs []error
	var ref []kv
	for i, r := range members {
		kvs, err := dumpShard(r.db)
		if err != nil {
			return fmt.Errorf("dump n%d: %w", r.id, err)
		}
		res.Digests = append(res.Digests, digestOf(kvs))
		if i == 0 {
			ref = kvs
		} else if res.Digests[i] != res.Digests[0] {
			errs = append(errs, fmt.Errorf("%w: n%d %v, n%d %v; first difference: %s",
				ErrDiverged, members[0].id, res.Digests[0], r.id, res.Digests[i], firstDiff(ref, kvs)))
		}
		replayed, st, err := replayReplica(r, log)
		res.Replays = append(res.Replays, st)
		if err != nil {
			errs = append(errs, fmt.Errorf("replay n%d: %w", r.id, err))
		} else if d := digestOf(replayed); d != res.Digests[i] {
			errs = append(errs, fmt.Errorf("%w: n%d live %v, replayed %v (snapshot %d + %d entries); first difference: %s",
				ErrReplayMismatch, r.id, res.Digests[i], d, st.SnapshotIndex, st.Entries, firstDiff(kvs, replayed)))
		}
	}
	return errors.Join(errs...)
}
