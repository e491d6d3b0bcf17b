package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/anishathalye/porcupine"
)

// TestPlantedBugsAreCaught runs the harness against deliberately broken plants: each bug must be reported, with
// the right sentinel, on every seed tried. A checker that passes these too would be checking nothing.
func TestPlantedBugsAreCaught(t *testing.T) {
	cases := []struct {
		name string
		bugs Bugs
		want []error // any of them
	}{
		{"acknowledged puts never proposed", Bugs{LoseAckedPuts: 3}, []error{ErrNotLinearizable}},
		{"reads from the most lagging replica", Bugs{StaleReads: true}, []error{ErrNotLinearizable}},
		// Usually ErrDiverged; if every follower restored the leader's snapshot after the last put, the replicas
		// agree and the reads see the wrong texts instead.
		{"nondeterministic apply", Bugs{NondeterministicApply: true}, []error{ErrDiverged, ErrNotLinearizable}},
	}
	for _, c := range cases {
		for seed := uint64(1); seed <= 2; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", c.name, seed), func(t *testing.T) {
				t.Parallel()
				res, err := Run(Options{Seed: seed, Bugs: c.bugs, Logger: testLogger(t)})
				if !slices.ContainsFunc(c.want, func(w error) bool { return errors.Is(err, w) }) {
					t.Errorf("planted bug not caught: got %v, want %v\n%s", err, c.want, summary(res))
				}
			})
		}
	}
}

// TestModelRejectsAnomalies checks the model alone on hand-written histories.
func TestModelRejectsAnomalies(t *testing.T) {
	op := func(c int, call, ret int64, in input, out output) porcupine.Operation {
		return porcupine.Operation{ClientId: c, Input: in, Output: out, Call: call, Return: ret}
	}
	put := func(c int, call, ret int64, ids ...string) porcupine.Operation {
		return op(c, call, ret, input{Kind: opPut, User: "u", IDs: ids}, output{})
	}
	get := func(c int, call, ret int64, state string) porcupine.Operation {
		return op(c, call, ret, input{Kind: opGet, User: "u"}, output{IDs: state})
	}
	del := func(c int, call, ret int64, n int, ids ...string) porcupine.Operation {
		out := output{Deleted: n}
		if ret == math.MaxInt64 {
			out = output{Unknown: true}
		}
		return op(c, call, ret, input{Kind: opDelete, User: "u", IDs: ids}, out)
	}
	other := op(2, 0, 1, input{Kind: opPut, User: "v", IDs: []string{"z"}}, output{})
	cases := []struct {
		name string
		h    []porcupine.Operation
		ok   bool
	}{
		{"put get delete get", []porcupine.Operation{put(0, 0, 1, "a", "b"), get(1, 2, 3, "a,b"), del(0, 4, 5, 1, "a", "x"), get(1, 6, 7, "b")}, true},
		{"concurrent put: either read", []porcupine.Operation{put(0, 0, 10, "a"), get(1, 1, 2, ""), get(1, 3, 4, "a")}, true},
		{"read goes back in time", []porcupine.Operation{put(0, 0, 10, "a"), get(1, 1, 2, "a"), get(1, 3, 4, "")}, false},
		{"torn multi-put", []porcupine.Operation{put(0, 0, 10, "a", "b"), get(1, 1, 2, "a")}, false},
		{"lost put", []porcupine.Operation{put(0, 0, 1, "a"), get(1, 2, 3, "")}, false},
		{"stale read after delete", []porcupine.Operation{put(0, 0, 1, "a"), del(0, 2, 3, 1, "a"), get(1, 4, 5, "a")}, false},
		{"double delete", []porcupine.Operation{put(0, 0, 1, "a"), del(0, 2, 3, 1, "a"), del(1, 4, 5, 1, "a")}, false},
		{"unknown delete may apply", []porcupine.Operation{put(0, 0, 1, "a"), del(0, 2, math.MaxInt64, 0, "a"), get(1, 4, 5, "a"), get(1, 6, 7, "")}, true},
		{"unknown delete cannot be undone", []porcupine.Operation{put(0, 0, 1, "a"), del(0, 2, math.MaxInt64, 0, "a"), get(1, 4, 5, ""), get(1, 6, 7, "a")}, false},
		{"corrupt record", []porcupine.Operation{put(0, 0, 1, "a"), op(1, 2, 3, input{Kind: opGet, User: "u"}, output{IDs: "a", Corrupt: "a"})}, false},
		{"users are independent", []porcupine.Operation{other, put(0, 0, 1, "a"), get(1, 2, 3, "a")}, true},
	}
	for _, c := range cases {
		if got := porcupine.CheckOperations(userModel, c.h); got != c.ok {
			t.Errorf("%s: linearizable=%v, want %v", c.name, got, c.ok)
		}
	}
}

func TestBadOptions(t *testing.T) {
	for _, o := range []Options{{Nodes: 6}, {Nodes: -1}, {Clients: -1}} {
		if _, err := Run(o); !errors.Is(err, ErrBadOptions) {
			t.Errorf("%+v: got %v, want ErrBadOptions", o, err)
		}
	}
}
