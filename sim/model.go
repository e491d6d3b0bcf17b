package sim

import (
	"fmt"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"
)

// The model: per user, the set of memory ids present. Every id is put by exactly one operation (ids are fresh, as
// the server's ULIDs are) and a record's text is a function of its id, so the set is the whole observable state.
// A state is the ids sorted and comma-joined: a comparable value porcupine can cache.

type opKind uint8

const (
	opPut        opKind = iota + 1 // put memories with fresh ids
	opGet                          // read every memory of the user
	opDelete                       // delete some ids; returns how many existed
	opDeleteUser                   // delete every memory of the user; returns how many existed
)

type input struct {
	Kind opKind
	User string
	IDs  []string // put: the new ids; delete: the ids to delete
	Req  string   // unique per planned operation: the request id of deletes
}

type output struct {
	Unknown bool   // a write whose outcome the client never learned: it may or may not have applied
	Deleted int    // delete, delete-user: how many memories existed
	IDs     string // get: the ids present, as a state
	Corrupt string // get: a record whose text is not what its put wrote, "" if none
}

func parseState(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func formatState(ids []string) string {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	return strings.Join(slices.Compact(ids), ",")
}

func stepModel(state, in, out any) (bool, any) {
	s, i, o := parseState(state.(string)), in.(input), out.(output)
	switch i.Kind {
	case opPut:
		for _, id := range i.IDs {
			if slices.Contains(s, id) {
				return false, state // a fresh id cannot exist before its own put
			}
		}
		return true, formatState(append(s, i.IDs...))
	case opGet:
		return o.Corrupt == "" && o.IDs == state.(string), state
	case opDelete:
		var keep []string
		for _, id := range s {
			if !slices.Contains(i.IDs, id) {
				keep = append(keep, id)
			}
		}
		return o.Unknown || o.Deleted == len(s)-len(keep), formatState(keep)
	case opDeleteUser:
		return o.Unknown || o.Deleted == len(s), ""
	}
	return false, state
}

// userModel checks each user's history on its own: users share nothing in the state machine, and small partitions
// keep porcupine's search fast.
var userModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		byUser := map[string][]porcupine.Operation{}
		var order []string
		for _, op := range h {
			u := op.Input.(input).User
			if _, ok := byUser[u]; !ok {
				order = append(order, u)
			}
			byUser[u] = append(byUser[u], op)
		}
		out := make([][]porcupine.Operation, 0, len(order))
		for _, u := range order {
			out = append(out, byUser[u])
		}
		return out
	},
	Init:              func() any { return "" },
	Step:              stepModel,
	DescribeOperation: describeOp,
	DescribeState: func(s any) string {
		if s.(string) == "" {
			return "{}"
		}
		return "{" + s.(string) + "}"
	},
}

func describeOp(in, out any) string {
	i, o := in.(input), out.(output)
	ids := strings.Join(i.IDs, ",")
	switch {
	case i.Kind == opGet && o.Corrupt != "":
		return fmt.Sprintf("get(%s)={%s} corrupt %s", i.User, o.IDs, o.Corrupt)
	case i.Kind == opGet:
		return fmt.Sprintf("get(%s)={%s}", i.User, o.IDs)
	case o.Unknown:
		return fmt.Sprintf("%s(%s,%s)=?", kindName(i.Kind), i.User, ids)
	case i.Kind == opPut:
		return fmt.Sprintf("put(%s,%s)", i.User, ids)
	}
	return fmt.Sprintf("%s(%s,%s)=%d", kindName(i.Kind), i.User, ids, o.Deleted)
}

func kindName(k opKind) string {
	return [...]string{"?", "put", "get", "delete", "delete-user"}[k]
}
