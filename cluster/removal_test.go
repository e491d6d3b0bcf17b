package cluster

import (
	"slices"
	"strings"
	"testing"
)

// Removing a node counts every group it may still be in: its placement, and the voters and non-voters its
// leader reports. A node the placement moved off is still a voter until the leader removes it, and beside a
// dead voter its loss would leave the group without a quorum for good.
func TestRemovalLossCountsTheGroupNotOnlyThePlacement(t *testing.T) {
	st := MetaState{Placement: [][]string{{"a", "b", "c"}}}
	live := map[string]NodeInfo{"a": {}, "b": {}}
	for _, tc := range []struct {
		name   string
		view   shardView
		remove string
		want   string // a substring of the one loss, or "" for none
	}{
		{"converged, a node outside the group", shardView{leader: "a", voters: []string{"a", "b", "c"}}, "r", ""},
		{"still a voter beside a dead one", shardView{leader: "a", voters: []string{"a", "b", "c", "r"}}, "r", "quorum (2 of 4 live)"},
		{"still a non-voter, alive", shardView{leader: "a", voters: []string{"a", "b", "c"}, nonvoters: []string{"b2"}}, "b2", ""},
		{"no leader reported", shardView{}, "r", ""},
		{"a dead placed voter", shardView{leader: "a", voters: []string{"a", "b", "c"}}, "c", ""},
		{"a live placed voter", shardView{leader: "a", voters: []string{"a", "b", "c"}}, "b", "quorum (1 of 3 live)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := removalLoss(st, []shardView{tc.view}, live, tc.remove)
			if tc.want == "" && len(got) > 0 || tc.want != "" && !slices.ContainsFunc(got, func(l string) bool {
				return strings.Contains(l, tc.want)
			}) {
				t.Fatalf("removing %s: %q, want %q", tc.remove, got, tc.want)
			}
		})
	}
}
