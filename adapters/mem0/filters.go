package mem0

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/memcluster/memcluster/apiv1"
)

// where is what a mem0 filter narrows a memcluster search to: memcluster's filters are one conjunction of
// user, agent, run, tags and a time range, so a filter that needs more (OR over several conditions, NOT,
// metadata) is refused with 400 naming the part, never approximated.
type where struct {
	user, agent, run string
	from, to         *time.Time
	tags             []string
	entity           bool // some entity id was named (mem0 requires one)
}

// parseFilters reads mem0's filter language: a root AND / OR / NOT over {field: value} or {field: {op: value}},
// or a bare {field: value, …} (an implicit AND).
func parseFilters(raw map[string]any) (where, error) {
	var w where
	if err := w.node(raw); err != nil {
		return w, err
	}
	if !w.entity {
		return w, invalidf("filters: name at least one of user_id, agent_id or run_id")
	}
	return w, nil
}

func (w *where) node(m map[string]any) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := w.key(k, m[k]); err != nil {
			return err
		}
	}
	return nil
}

func (w *where) key(k string, v any) error {
	switch k {
	case "AND", "OR":
		list, ok := v.([]any)
		if !ok {
			return invalidf("filters: %s takes a list of conditions", k)
		}
		if k == "OR" && len(list) > 1 {
			return invalidf("filters: OR over %d conditions cannot be expressed: memcluster's filters are one conjunction", len(list))
		}
		for i, c := range list {
			cm, ok := c.(map[string]any)
			if !ok {
				return invalidf("filters: %s[%d] is not an object", k, i)
			}
			if err := w.node(cm); err != nil {
				return err
			}
		}
		return nil
	case "NOT":
		return invalidf("filters: NOT cannot be expressed: memcluster's filters only include")
	}
	return w.field(k, v)
}

// condition splits {op: value} (or a bare value, meaning eq).
func condition(field string, v any) (string, any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return "eq", v, nil
	}
	if len(m) != 1 {
		return "", nil, invalidf("filters: %s: want one operator, got %d", field, len(m))
	}
	for op, arg := range m {
		switch op {
		case "eq", "ne", "in", "gt", "gte", "lt", "lte", "contains", "icontains":
			return op, arg, nil
		}
		return "", nil, invalidf("filters: %s: unknown operator %q (eq ne in gt gte lt lte contains icontains)", field, op)
	}
	return "", nil, nil
}

func (w *where) field(field string, v any) error {
	switch field {
	case "app_id":
		return invalidf("filters: app_id cannot be expressed: memcluster has no apps (filter on user_id, agent_id or run_id)")
	case "metadata", "updated_at", "keywords", "memory_ids":
		return invalidf("filters: %s cannot be expressed in a memcluster search", field)
	case "user_id", "agent_id", "run_id", "created_at", "categories":
	default:
		return invalidf("filters: unknown field %q (user_id agent_id run_id created_at categories)", field)
	}
	op, arg, err := condition(field, v)
	if err != nil {
		return err
	}
	switch field {
	case "user_id":
		return w.entityID(&w.user, field, op, arg)
	case "agent_id":
		return w.entityID(&w.agent, field, op, arg)
	case "run_id":
		return w.entityID(&w.run, field, op, arg)
	case "created_at":
		return w.timeBound(op, arg)
	}
	return w.category(op, arg)
}

// entityID sets one of user, agent or run: eq (or in with one value) names it, "*" means any.
func (w *where) entityID(dst *string, field, op string, arg any) error {
	if op == "in" {
		list, ok := arg.([]any)
		if !ok || len(list) != 1 {
			return invalidf("filters: %s: in over several values cannot be expressed: name one", field)
		}
		op, arg = "eq", list[0]
	}
	s, ok := arg.(string)
	if op != "eq" || !ok || s == "" {
		return invalidf("filters: %s: only equality to a non-empty string (or \"*\") can be expressed", field)
	}
	w.entity = true
	if s == "*" {
		return nil
	}
	if *dst != "" && *dst != s {
		return invalidf("filters: %s: two different values (%q and %q) can never both hold", field, *dst, s)
	}
	*dst = s
	return nil
}

func (w *where) timeBound(op string, arg any) error {
	t, err := parseTime(arg)
	if err != nil {
		return invalidf("filters: created_at: %v", err)
	}
	switch op {
	case "gte":
		w.from = &t
	case "gt":
		t = t.Add(time.Nanosecond)
		w.from = &t
	case "lt":
		w.to = &t
	case "lte":
		t = t.Add(time.Nanosecond)
		w.to = &t
	default:
		return invalidf("filters: created_at: only gt, gte, lt and lte can be expressed, not %s", op)
	}
	return nil
}

func (w *where) category(op string, arg any) error {
	if op == "in" {
		list, ok := arg.([]any)
		if !ok || len(list) != 1 {
			return invalidf("filters: categories: in over several values cannot be expressed (memcluster requires every tag listed)")
		}
		op, arg = "contains", list[0]
	}
	s, ok := arg.(string)
	if (op != "contains" && op != "eq") || !ok || s == "" {
		return invalidf("filters: categories: only contains (or in with one value) of a string can be expressed")
	}
	w.tags = append(w.tags, s)
	return nil
}

// parseTime reads a time as mem0 sends one: RFC 3339, YYYY-MM-DD, or unix seconds.
func parseTime(v any) (time.Time, error) {
	switch x := v.(type) {
	case float64:
		return time.Unix(int64(x), 0).UTC(), nil
	case json.Number:
		n, err := strconv.ParseInt(string(x), 10, 64)
		return time.Unix(n, 0).UTC(), err
	case string:
		if t, err := time.Parse(time.RFC3339, x); err == nil {
			return t, nil
		}
		if t, err := time.Parse(time.DateOnly, x); err == nil {
			return t, nil
		}
		return time.Time{}, fmt.Errorf("%q is not RFC 3339, YYYY-MM-DD or unix seconds", x)
	}
	return time.Time{}, fmt.Errorf("%v is not a time", v)
}

// apply narrows a search to w.
func (w where) apply(req *apiv1.SearchRequest) {
	req.UserID, req.AgentID, req.RunID = w.user, w.agent, w.run
	req.From, req.To, req.Tags = w.from, w.to, w.tags
}
