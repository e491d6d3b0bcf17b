package chaos

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// The model: a map memory id -> text. Ids are assigned by the server, so every id has exactly one put (the one
// that returned it); gets and deletes pick ids learned from acknowledged puts. Partitioning by id makes each
// partition a single register: "" (absent) or the text.

type opKind int

const (
	opPut opKind = iota
	opGet
	opDelete
)

type input struct {
	Kind opKind
	User string
	ID   string
	Text string // put: the text written
}

type output struct {
	Unknown bool   // indeterminate (timeout, 5xx, connection error after sending): may or may not have applied
	Found   bool   // get: found; delete: deleted (false = 404)
	Text    string // get: the text read
}

var registerModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		byID := map[string][]porcupine.Operation{}
		var order []string
		for _, op := range h {
			id := op.Input.(input).ID
			if _, ok := byID[id]; !ok {
				order = append(order, id)
			}
			byID[id] = append(byID[id], op)
		}
		out := make([][]porcupine.Operation, 0, len(order))
		for _, id := range order {
			out = append(out, byID[id])
		}
		return out
	},
	Init: func() any { return "" },
	Step: func(state, in, out any) (bool, any) {
		s, i, o := state.(string), in.(input), out.(output)
		switch i.Kind {
		case opPut:
			// A fresh id: it cannot exist before its own put.
			return s == "", i.Text
		case opGet:
			if !o.Found {
				return s == "", s
			}
			return s == o.Text, s
		case opDelete:
			if o.Unknown {
				return true, ""
			}
			return o.Found == (s != ""), ""
		}
		return false, s
	},
	DescribeOperation: func(in, out any) string {
		i, o := in.(input), out.(output)
		switch i.Kind {
		case opPut:
			return fmt.Sprintf("put(%s,%s)=%q", i.User, i.ID, i.Text)
		case opGet:
			if !o.Found {
				return fmt.Sprintf("get(%s)=404", i.ID)
			}
			return fmt.Sprintf("get(%s)=%q", i.ID, o.Text)
		default:
			if o.Unknown {
				return fmt.Sprintf("delete(%s)=?", i.ID)
			}
			return fmt.Sprintf("delete(%s)=%v", i.ID, o.Found)
		}
	},
	DescribeState: func(s any) string {
		if s.(string) == "" {
			return "absent"
		}
		return fmt.Sprintf("%q", s)
	},
}
