package mem0

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/memcluster/memcluster/memory"
)

// routePlatform registers the mem0 platform's paths: the v3 ones the current MemoryClient calls, and the
// v1/v2 ones older clients call.
func (a *Adapter) routePlatform() {
	a.handle("GET /v1/ping/{$}", a.ping)
	a.handle("POST /v3/memories/add/{$}", a.addV3)
	a.handle("POST /v1/memories/{$}", a.addV1)
	a.handle("GET /v1/event/{id}/{$}", a.event)
	a.handle("POST /v3/memories/{$}", a.listV3)
	a.handle("POST /v2/memories/{$}", a.listV2)
	a.handle("GET /v1/memories/{$}", a.listV1)
	a.handle("POST /v3/memories/search/{$}", a.searchV3)
	a.handle("POST /v2/memories/search/{$}", a.searchV2)
	a.handle("POST /v1/memories/search/{$}", a.searchV1)
	a.handle("GET /v1/memories/{id}/{$}", a.getOne)
	a.handle("PUT /v1/memories/{id}/{$}", a.updateOne)
	a.handle("DELETE /v1/memories/{id}/{$}", a.deleteOne)
	a.handle("GET /v1/memories/{id}/history/{$}", a.historyOne)
	a.handle("DELETE /v1/memories/{$}", a.deleteAllV1)
	a.handle("PUT /v1/batch/{$}", a.batchUpdate)
	a.handle("DELETE /v1/batch/{$}", a.batchDelete)
	a.unsupported("GET /v1/memories/events/{$}", "memcluster keeps no log of API events")
	a.unsupported("/v1/entities/", "memcluster does not list entities; GET /v1/users/{user_id}/… reads one user")
	a.unsupported("/v2/entities/", "memcluster does not manage entities; DELETE /v1/memories/?user_id= forgets a user")
	a.unsupported("/v1/exports/", "exports are not offered; memctl tier and backups are the way out")
	a.unsupported("/v1/summary/", "summaries are not offered; POST /v1/users/{user_id}/context packs a context")
	a.unsupported("/v1/feedback/", "feedback on memories is not recorded")
	a.unsupported("/api/v1/", "organisations, projects and webhooks do not exist in memcluster")
}

// ping checks the key with a call any valid token may make. The client requires an organisation and a
// project: memcluster has neither, and names fixed ones.
func (a *Adapter) ping(_ *http.Request, c *call) (int, any, error) {
	if _, err := c.cl.ClusterStatus(c.ctx); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]string{"status": "ok", "org_id": "memcluster", "project_id": "default"}, nil
}

// addBody is the body of the platform's adds (v1 and v3). Fields mem0 defines that memcluster cannot honour
// are decoded so that a non-default value can be refused by name.
type addBody struct {
	Messages         []message      `json:"messages"`
	UserID           string         `json:"user_id"`
	AgentID          string         `json:"agent_id"`
	RunID            string         `json:"run_id"`
	AppID            string         `json:"app_id"`
	Metadata         map[string]any `json:"metadata"`
	Infer            *bool          `json:"infer"`
	Timestamp        *int64         `json:"timestamp"`
	AsyncMode        *bool          `json:"async_mode"`
	Version          string         `json:"version"`
	OutputFormat     string         `json:"output_format"`
	ExpirationDate   *string        `json:"expiration_date"`
	CustomInstr      string         `json:"custom_instructions"`
	AgentCustomInstr string         `json:"agent_custom_instructions"`
	Includes         string         `json:"includes"`
	Excludes         string         `json:"excludes"`
	Immutable        bool           `json:"immutable"`
	EnableGraph      bool           `json:"enable_graph"`
	CustomCategories any            `json:"custom_categories"`
	OrgID            string         `json:"org_id"`
	ProjectID        string         `json:"project_id"`
}

func (b addBody) input() (addInput, error) {
	switch {
	case b.ExpirationDate != nil:
		return addInput{}, invalidf("expiration_date: memories do not expire in memcluster (tiering moves old ones to cold storage)")
	case b.CustomInstr != "" || b.AgentCustomInstr != "" || b.Includes != "" || b.Excludes != "":
		return addInput{}, invalidf("custom_instructions, includes and excludes: extraction is configured on the node (--llm-*), not per call")
	case b.Immutable:
		return addInput{}, invalidf("immutable: memcluster has no immutable memories")
	case b.EnableGraph:
		return addInput{}, invalidf("enable_graph: the graph is built from facts always (GET /v1/users/{user_id}/graph); it is not a per-call switch")
	case b.CustomCategories != nil:
		return addInput{}, invalidf("custom_categories: memcluster does not classify memories into categories")
	}
	in := addInput{Messages: b.Messages, UserID: b.UserID, AgentID: b.AgentID, RunID: b.RunID, AppID: b.AppID,
		Metadata: b.Metadata, Infer: b.Infer == nil || *b.Infer}
	if b.Timestamp != nil {
		t := time.Unix(*b.Timestamp, 0).UTC()
		in.Timestamp = &t
	}
	return in, nil
}

// addAnswer is the answer of an add: the event the platform's clients poll, finished already.
type addAnswer struct {
	Message string        `json:"message"`
	Status  string        `json:"status"`
	EventID string        `json:"event_id"`
	Results []addResultV1 `json:"results"`
}

// addResultV1 is one change, in the shapes of every client generation: id, event and data.memory (v1), and
// message, status and event_id (the platform's queued form).
type addResultV1 struct {
	addResult
	Data    map[string]string `json:"data"`
	Message string            `json:"message"`
	Status  string            `json:"status"`
	EventID string            `json:"event_id"`
}

func (a *Adapter) doAdd(r *http.Request, c *call) (addAnswer, error) {
	started := a.opts.Now()
	var b addBody
	if err := decode(r, &b); err != nil {
		return addAnswer{}, err
	}
	in, err := b.input()
	if err != nil {
		return addAnswer{}, err
	}
	res, err := c.add(in)
	if err != nil {
		return addAnswer{}, err
	}
	anyRes := make([]any, len(res))
	for i := range res {
		anyRes[i] = res[i]
	}
	ev := a.events.add(c.key, "ADD", b, anyRes, started)
	out := addAnswer{Message: "ok", Status: "SUCCEEDED", EventID: ev, Results: make([]addResultV1, len(res))}
	for i, x := range res {
		out.Results[i] = addResultV1{addResult: x, Data: map[string]string{"memory": x.Memory}, Message: "ok",
			Status: "SUCCEEDED", EventID: ev}
	}
	return out, nil
}

func (a *Adapter) addV3(r *http.Request, c *call) (int, any, error) {
	out, err := a.doAdd(r, c)
	return http.StatusOK, out, err
}

// addV1 answers in the v1 envelope: {results, relations}.
func (a *Adapter) addV1(r *http.Request, c *call) (int, any, error) {
	out, err := a.doAdd(r, c)
	return http.StatusOK, map[string]any{"results": out.Results, "relations": []any{}}, err
}

func (a *Adapter) event(r *http.Request, c *call) (int, any, error) {
	ev, ok := a.events.get(c.key, r.PathValue("id"))
	if !ok {
		return 0, nil, notFoundf("event %q: not found (events are kept by the node that took the add, for a while)", r.PathValue("id"))
	}
	return http.StatusOK, ev, nil
}

// listBody is the body of the v2 and v3 get-all.
type listBody struct {
	Filters     map[string]any `json:"filters"`
	Page        int            `json:"page"`
	PageSize    int            `json:"page_size"`
	ShowExpired bool           `json:"show_expired"`
	OrgID       string         `json:"org_id"`
	ProjectID   string         `json:"project_id"`
}

// listed reads the filters and pages of a get-all.
func (c *call) listed(r *http.Request) ([]memoryOut, int, int, error) {
	var b listBody
	if err := decode(r, &b); err != nil {
		return nil, 0, 0, err
	}
	if b.Filters == nil {
		return nil, 0, 0, invalidf("filters: required, with the entity ids inside (top-level user_id is refused)")
	}
	w, err := parseFilters(b.Filters)
	if err != nil {
		return nil, 0, 0, err
	}
	page, size, err := pages(r, b.Page, b.PageSize)
	if err != nil {
		return nil, 0, 0, err
	}
	all, err := c.listAll(w)
	return all, page, size, err
}

func pages(r *http.Request, page, size int) (int, int, error) {
	for _, p := range []struct {
		name string
		dst  *int
	}{{"page", &page}, {"page_size", &size}} {
		if s := r.URL.Query().Get(p.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				return 0, 0, invalidf("%s: %q is not a number", p.name, s)
			}
			*p.dst = n
		}
	}
	if page == 0 {
		page = 1
	}
	if size == 0 {
		size = 100
	}
	if page < 1 || size < 1 || size > 200 {
		return 0, 0, invalidf("page must be ≥ 1 and page_size 1..200")
	}
	return page, size, nil
}

func (a *Adapter) listV3(r *http.Request, c *call) (int, any, error) {
	all, page, size, err := c.listed(r)
	if err != nil {
		return 0, nil, err
	}
	lo, hi := min((page-1)*size, len(all)), min(page*size, len(all))
	out := map[string]any{"count": len(all), "next": nil, "previous": nil, "results": all[lo:hi]}
	if hi < len(all) {
		out["next"] = pageURL(r, page+1, size)
	}
	if page > 1 {
		out["previous"] = pageURL(r, page-1, size)
	}
	return http.StatusOK, out, nil
}

// pageURL is the absolute link to another page: the request's own URI (with the prefix the node mounts the
// adapter under, which r.URL.Path no longer has) on the host it was sent to.
func pageURL(r *http.Request, page, size int) string {
	u, err := url.ParseRequestURI(r.RequestURI)
	if err != nil {
		u = r.URL
	}
	q := u.Query()
	q.Set("page", strconv.Itoa(page))
	q.Set("page_size", strconv.Itoa(size))
	u.RawQuery = q.Encode()
	u.Scheme, u.Host = "http", r.Host
	if r.TLS != nil {
		u.Scheme = "https"
	}
	return u.String()
}

// listV2 answers a bare list, as v2 does.
func (a *Adapter) listV2(r *http.Request, c *call) (int, any, error) {
	all, _, _, err := c.listed(r)
	return http.StatusOK, all, err
}

// listV1 is GET /v1/memories/?user_id=… (older clients).
func (a *Adapter) listV1(r *http.Request, c *call) (int, any, error) {
	w, err := queryWhere(r)
	if err != nil {
		return 0, nil, err
	}
	all, err := c.listAll(w)
	return http.StatusOK, all, err
}

// queryWhere reads entity ids from the query (v1 and the self-hosted server).
func queryWhere(r *http.Request) (where, error) {
	q := r.URL.Query()
	if q.Get("app_id") != "" {
		return where{}, invalidf("app_id cannot be expressed: memcluster has no apps")
	}
	w := where{user: q.Get("user_id"), agent: q.Get("agent_id"), run: q.Get("run_id")}
	if w.user == "" && w.agent == "" && w.run == "" {
		return w, invalidf("user_id, agent_id or run_id: one is required")
	}
	return w, nil
}

// searchBody is the body of the v1, v2 and v3 searches.
type searchBody struct {
	Query          string         `json:"query"`
	Filters        map[string]any `json:"filters"`
	TopK           *int           `json:"top_k"`
	Limit          *int           `json:"limit"`
	Threshold      *float64       `json:"threshold"`
	Rerank         bool           `json:"rerank"`
	KeywordSearch  bool           `json:"keyword_search"`
	Fields         []string       `json:"fields"`
	Categories     []string       `json:"categories"`
	Metadata       map[string]any `json:"metadata"`
	ShowExpired    bool           `json:"show_expired"`
	LatestOnly     *bool          `json:"latest_only"`
	ReferenceDate  any            `json:"reference_date"`
	UserID         string         `json:"user_id"`
	AgentID        string         `json:"agent_id"`
	RunID          string         `json:"run_id"`
	AppID          string         `json:"app_id"`
	Version        string         `json:"version"`
	OutputFormat   string         `json:"output_format"`
	OrgID          string         `json:"org_id"`
	ProjectID      string         `json:"project_id"`
	EnableGraph    bool           `json:"enable_graph"`
	FilterMemories bool           `json:"filter_memories"`
}

// searched runs a search body; topLevel says whether entity ids may sit outside filters (v1, v2).
func (c *call) searched(r *http.Request, topLevel bool) ([]memoryOut, error) {
	var b searchBody
	if err := decode(r, &b); err != nil {
		return nil, err
	}
	switch {
	case b.Rerank:
		return nil, invalidf("rerank: memcluster has no reranker (its hybrid score is final)")
	case b.ReferenceDate != nil:
		return nil, invalidf("reference_date: searches run at the present")
	case len(b.Metadata) > 0:
		return nil, invalidf("metadata: memcluster searches do not filter on metadata")
	case b.EnableGraph:
		return nil, invalidf("enable_graph: graph search is not offered; GET /v1/users/{user_id}/graph")
	case b.AppID != "":
		return nil, invalidf("app_id cannot be expressed: memcluster has no apps")
	case !topLevel && (b.UserID != "" || b.AgentID != "" || b.RunID != ""):
		return nil, invalidf("user_id, agent_id and run_id go inside filters in this version")
	}
	f := map[string]any{"AND": []any{orEmpty(b.Filters)}}
	for k, v := range map[string]string{"user_id": b.UserID, "agent_id": b.AgentID, "run_id": b.RunID} {
		if v != "" {
			f["AND"] = append(f["AND"].([]any), map[string]any{k: v})
		}
	}
	for _, cat := range b.Categories {
		f["AND"] = append(f["AND"].([]any), map[string]any{"categories": map[string]any{"contains": cat}})
	}
	w, err := parseFilters(f)
	if err != nil {
		return nil, err
	}
	k := 10
	if b.TopK != nil {
		k = *b.TopK
	} else if b.Limit != nil {
		k = *b.Limit
	}
	threshold := 0.1
	if b.Threshold != nil {
		threshold = *b.Threshold
	}
	hits, err := c.search(b.Query, w, k, &threshold)
	if err != nil || len(b.Fields) == 0 {
		return hits, err
	}
	return nil, invalidf("fields: projections are not offered; every field is answered")
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func (a *Adapter) searchV3(r *http.Request, c *call) (int, any, error) {
	hits, err := c.searched(r, false)
	return http.StatusOK, map[string]any{"results": hits}, err
}

// searchV2 answers a bare list, as the platform's v2 document has it.
func (a *Adapter) searchV2(r *http.Request, c *call) (int, any, error) {
	hits, err := c.searched(r, true)
	return http.StatusOK, hits, err
}

func (a *Adapter) searchV1(r *http.Request, c *call) (int, any, error) {
	hits, err := c.searched(r, true)
	return http.StatusOK, map[string]any{"results": hits}, err
}

func (a *Adapter) getOne(r *http.Request, c *call) (int, any, error) {
	m, err := c.get(r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, toMem0(m), nil
}

// updateBody is the body of a platform update.
type updateBody struct {
	Text           string         `json:"text"`
	Data           string         `json:"data"`
	Metadata       map[string]any `json:"metadata"`
	Timestamp      *int64         `json:"timestamp"`
	ExpirationDate *string        `json:"expiration_date"`
}

func (a *Adapter) updateOne(r *http.Request, c *call) (int, any, error) {
	var b updateBody
	if err := decode(r, &b); err != nil {
		return 0, nil, err
	}
	m, err := c.updated(r.PathValue("id"), b)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, toMem0(m), nil
}

func (c *call) updated(id string, b updateBody) (memory.Memory, error) {
	switch {
	case b.Timestamp != nil:
		return memory.Memory{}, invalidf("timestamp: a memory's time is set when it is stored")
	case b.ExpirationDate != nil:
		return memory.Memory{}, invalidf("expiration_date: memories do not expire in memcluster")
	}
	text := b.Text
	if text == "" {
		text = b.Data
	}
	if text == "" && b.Metadata == nil {
		return memory.Memory{}, invalidf("text or metadata: one is required")
	}
	return c.update(id, text, b.Metadata)
}

func (a *Adapter) deleteOne(r *http.Request, c *call) (int, any, error) {
	if r.URL.Query().Get("delete_linked") == "true" {
		return 0, nil, invalidf("delete_linked: memcluster keeps the facts a memory superseded as history; delete them one by one")
	}
	if err := c.delete(r.PathValue("id")); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]string{"message": "Memory deleted successfully!"}, nil
}

func (a *Adapter) historyOne(r *http.Request, c *call) (int, any, error) {
	h, err := c.history(r.PathValue("id"))
	return http.StatusOK, h, err
}

func (a *Adapter) deleteAllV1(r *http.Request, c *call) (int, any, error) {
	q := r.URL.Query()
	n, err := c.deleteAll(q.Get("user_id"), q.Get("agent_id"), q.Get("run_id"), q.Get("app_id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]string{"message": "Memories deleted successfully! (" + strconv.Itoa(n) + ")"}, nil
}

// batchBody is the body of the batch routes: at most 1000 memories, each updated or deleted in turn. A batch
// is not atomic in memcluster (its memories may live in several users); the first failure stops it and
// names the memory.
type batchBody struct {
	Memories []struct {
		MemoryID string         `json:"memory_id"`
		Text     string         `json:"text"`
		Metadata map[string]any `json:"metadata"`
	} `json:"memories"`
}

func (a *Adapter) batch(r *http.Request, c *call, del bool) (int, any, error) {
	var b batchBody
	if err := decode(r, &b); err != nil {
		return 0, nil, err
	}
	if len(b.Memories) == 0 || len(b.Memories) > 1000 {
		return 0, nil, invalidf("memories: 1 to 1000 are required, got %d", len(b.Memories))
	}
	for i, m := range b.Memories {
		var err error
		if del {
			err = c.delete(m.MemoryID)
		} else {
			_, err = c.updated(m.MemoryID, updateBody{Text: m.Text, Metadata: m.Metadata})
		}
		if err != nil {
			return 0, nil, fmt.Errorf("memories[%d] (%s): %w", i, m.MemoryID, err)
		}
	}
	verb := "updated"
	if del {
		verb = "deleted"
	}
	return http.StatusOK, map[string]string{"message": "Successfully " + verb + " " + strconv.Itoa(len(b.Memories)) + " memories"}, nil
}

func (a *Adapter) batchUpdate(r *http.Request, c *call) (int, any, error) {
	return a.batch(r, c, false)
}
func (a *Adapter) batchDelete(r *http.Request, c *call) (int, any, error) { return a.batch(r, c, true) }
