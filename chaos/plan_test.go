package chaos

import (
	"reflect"
	"testing"
	"time"
)

// TestPlanDealsEveryKind runs without a cluster: a plan is a pure function of its spec, and three consecutive
// seeds of the default campaign (20 s schedules, 3 nodes and a spare) deal every fault kind between them, and a
// join is always followed by a dead fault on an older member, then a split, a drain and a removal.
func TestPlanDealsEveryKind(t *testing.T) {
	for _, partitions := range []bool{true, false} {
		for base := uint64(1); base <= 300; base++ {
			seen := map[faultKind]bool{}
			members, spares := 3, 1
			for i := uint64(0); i < 3; i++ {
				spec := planSpec{seed: base + i, members: members, spares: spares, partitions: partitions,
					d: 20 * time.Second, deadTimeout: 4 * time.Second}
				fs := plan(spec)
				if again := plan(spec); !reflect.DeepEqual(again, fs) {
					t.Fatalf("seed %d: plan is not a function of its spec", base+i)
				}
				for j, f := range fs {
					seen[f.kind] = true
					if f.kind == kindRemove {
						members, spares = members-1, spares+1
					}
					if f.kind != kindJoin {
						continue
					}
					members, spares = members+1, spares-1
					if j+4 >= len(fs) || fs[j+1].kind != kindDead || fs[j+1].node == f.node || fs[j+2].kind != kindReshard ||
						fs[j+3].kind != kindDrain || fs[j+4].kind != kindRemove {
						t.Fatalf("seed %d: a join must be followed by a dead fault on an older member, a split, a drain and a removal", base+i)
					}
				}
			}
			for _, k := range kinds {
				if !seen[k] && (partitions || !k.needsPartitions()) {
					t.Errorf("partitions=%v: seeds %d..%d never deal %s", partitions, base, base+2, k)
				}
			}
		}
	}
}
