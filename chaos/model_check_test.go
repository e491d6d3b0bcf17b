package chaos

import (
	"math"
	"testing"

	"github.com/anishathalye/porcupine"
)

// TestModelCatchesAnomalies runs without a cluster: the checker must accept linearizable histories (including
// an indeterminate delete) and reject a stale read after an acknowledged delete and a lost put.
func TestModelCatchesAnomalies(t *testing.T) {
	put := func(c int, call, ret int64) porcupine.Operation {
		return porcupine.Operation{ClientId: c, Input: input{Kind: opPut, ID: "x", Text: "a"}, Output: output{}, Call: call, Return: ret}
	}
	get := func(c int, call, ret int64, found bool) porcupine.Operation {
		o := output{Found: found}
		if found {
			o.Text = "a"
		}
		return porcupine.Operation{ClientId: c, Input: input{Kind: opGet, ID: "x"}, Output: o, Call: call, Return: ret}
	}
	del := func(c int, call, ret int64, o output) porcupine.Operation {
		return porcupine.Operation{ClientId: c, Input: input{Kind: opDelete, ID: "x"}, Output: o, Call: call, Return: ret}
	}
	cases := []struct {
		name string
		h    []porcupine.Operation
		ok   bool
	}{
		{"put get delete get", []porcupine.Operation{put(0, 0, 1), get(1, 2, 3, true), del(0, 4, 5, output{Found: true}), get(1, 6, 7, false)}, true},
		{"stale read after delete", []porcupine.Operation{put(0, 0, 1), del(0, 2, 3, output{Found: true}), get(1, 4, 5, true)}, false},
		{"lost put", []porcupine.Operation{put(0, 0, 1), get(1, 2, 3, false)}, false},
		{"indeterminate delete: either read is fine", []porcupine.Operation{put(0, 0, 1), del(0, 2, math.MaxInt64, output{Unknown: true}), get(1, 4, 5, true), get(1, 6, 7, false)}, true},
		{"indeterminate delete cannot be undone", []porcupine.Operation{put(0, 0, 1), del(0, 2, math.MaxInt64, output{Unknown: true}), get(1, 4, 5, false), get(1, 6, 7, true)}, false},
		{"double delete", []porcupine.Operation{put(0, 0, 1), del(0, 2, 3, output{Found: true}), del(1, 4, 5, output{Found: true})}, false},
	}
	for _, c := range cases {
		if got := porcupine.CheckOperations(registerModel, c.h); got != c.ok {
			t.Errorf("%s: linearizable=%v, want %v", c.name, got, c.ok)
		}
	}
}
