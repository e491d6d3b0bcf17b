package server

import (
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3gen"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
)

// The OpenAPI document is built from the route table itself: paths, methods and request bodies come from the
// handle calls that register them (route.go), answers from responses below, keyed by route name. A route
// registered without an answer type here fails TestOpenAPIDescribesEveryRoute; docs/openapi.json is this
// document as written by `go test ./server -run TestOpenAPIFile -update`.

// responses is the answer of each route, by endpoint name.
var responses = map[string]any{
	"put": apiv1.PutResponse{}, "put_batch": apiv1.PutBatchResponse{}, "get": memory.Memory{},
	"delete": apiv1.DeleteResponse{}, "search": apiv1.SearchResponse{}, "forget": apiv1.ForgetResponse{},
	"status": apiv1.ClusterStatus{}, "session_get": apiv1.SessionState{}, "session_append": apiv1.SessionState{},
	"session_flush": apiv1.ConsolidationResult{}, "session_end": apiv1.ConsolidationResult{},
	"remember": apiv1.ConsolidationResult{}, "facts": apiv1.FactsResponse{}, "history": apiv1.HistoryResponse{},
	"signals": apiv1.SignalsResponse{}, "aggregates": apiv1.AggregatesResponse{},
	"consolidate": apiv1.ConsolidateResponse{}, "pattern_correct": apiv1.ConsolidateResponse{},
	"graph": apiv1.GraphResponse{}, "context": apiv1.ContextResponse{}, "tier_run": apiv1.TierRunResponse{},
	"tier_status": apiv1.TierStatusResponse{}, "node_list": apiv1.NodesResponse{},
	"shard_list": apiv1.ShardsResponse{}, "node_drain": apiv1.NodeStateResponse{},
	"node_undrain": apiv1.NodeStateResponse{}, "node_remove": apiv1.NodeStateResponse{},
	"transfer_leader": apiv1.TransferLeaderResponse{}, "rebalance": apiv1.RebalanceResponse{},
	"shard_split": apiv1.SplitResponse{}, "update": memory.Memory{}, "list": apiv1.ListResponse{},
	"records": apiv1.RecordsResponse{}, "import": apiv1.ImportResponse{}, "users": apiv1.UsersResponse{},
	"workspace_get": apiv1.WorkspaceState{}, "workspace_put": apiv1.WorkspacePutResponse{},
	"workspace_delete": apiv1.WorkspaceDeleteResponse{}, "workspace_lines": apiv1.WorkspaceLines{},
	"workspace_search": apiv1.WorkspaceSearchResponse{},
}

// statusOf is the success status of a route (puts create).
func statusOf(name string) string {
	if name == "put" || name == "put_batch" {
		return "201"
	}
	return "200"
}

var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

// Describe adds f's paths to the document (an adapter mounted in front of this API describes its own).
// Call it before serving.
func (s *Server) Describe(f func(*openapi3.T)) { s.describers = append(s.describers, f) }

// Document is the OpenAPI 3.1 document of every route the node serves.
func (s *Server) Document() (*openapi3.T, error) {
	doc := &openapi3.T{OpenAPI: "3.1.0", Info: &openapi3.Info{Title: "memcluster", Version: "v1",
		Description: "The memcluster HTTP API. Bearer tokens (--auth-file) when authentication is on."},
		Paths: openapi3.NewPaths(), Components: &openapi3.Components{Schemas: openapi3.Schemas{},
			SecuritySchemes: openapi3.SecuritySchemes{"bearer": &openapi3.SecuritySchemeRef{
				Value: openapi3.NewJWTSecurityScheme().WithBearerFormat("opaque")}}}}
	errSchema, err := schemaOf(reflect.TypeFor[apiv1.Error](), doc)
	if err != nil {
		return nil, err
	}
	for i, e := range s.endpoints {
		if e.Body == bodyStream {
			doc.AddOperation(e.Path, e.Method, streamOp(e))
			continue
		}
		resp, ok := responses[e.Name]
		if !ok {
			continue // TestOpenAPIDescribesEveryRoute names it
		}
		op, err := operationOf(e, s.bodies[i], reflect.TypeOf(resp), errSchema, doc)
		if err != nil {
			return nil, err
		}
		doc.AddOperation(e.Path, e.Method, op)
	}
	for _, p := range []string{apiv1.PathHealthz, apiv1.PathReadyz, apiv1.PathOpenAPI} {
		doc.AddOperation(p, "GET", plainOp(strings.TrimPrefix(p, "/"), "application/json"))
	}
	doc.AddOperation(apiv1.PathMetrics, "GET", plainOp("metrics", "text/plain"))
	for _, f := range s.describers {
		f(doc)
	}
	return doc, nil
}

func operationOf(e endpoint, body, resp reflect.Type, errSchema *openapi3.SchemaRef, doc *openapi3.T) (*openapi3.Operation, error) {
	op := openapi3.NewOperation()
	op.OperationID, op.Summary = e.Name, e.Name+" (role: "+roleName(e.Role)+")"
	op.Security = &openapi3.SecurityRequirements{{"bearer": []string{}}}
	for _, m := range pathParam.FindAllStringSubmatch(e.Path, -1) {
		op.AddParameter(openapi3.NewPathParameter(m[1]).WithSchema(openapi3.NewStringSchema()))
	}
	if e.User == userQuery {
		op.AddParameter(openapi3.NewQueryParameter("user_id").WithSchema(openapi3.NewStringSchema()))
	}
	if e.Body != bodyNone && body != reflect.TypeFor[noFields]() {
		sr, err := schemaOf(body, doc)
		if err != nil {
			return nil, err
		}
		rb := openapi3.NewRequestBody().WithJSONSchemaRef(sr)
		rb.Required = e.Body == bodyRequired
		op.RequestBody = &openapi3.RequestBodyRef{Value: rb}
	}
	sr, err := schemaOf(resp, doc)
	if err != nil {
		return nil, err
	}
	op.AddResponse(0, openapi3.NewResponse().WithDescription("an error naming the problem").WithJSONSchemaRef(errSchema))
	op.Responses.Set(statusOf(e.Name), &openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription("OK").WithJSONSchemaRef(sr)})
	return op, nil
}

// streamOp describes a backup route: the file streams out (GET) or in (POST, answered with JSON), admin only.
func streamOp(e endpoint) *openapi3.Operation {
	if e.Method == http.MethodGet {
		op := plainOp(e.Name, "application/octet-stream")
		op.Summary = e.Name + " (role: " + roleName(e.Role) + "): the backup file, streamed"
		op.Security = &openapi3.SecurityRequirements{{"bearer": []string{}}}
		return op
	}
	op := plainOp(e.Name, "application/json")
	op.Summary = e.Name + " (role: " + roleName(e.Role) + "): a backup file streamed in"
	op.Security = &openapi3.SecurityRequirements{{"bearer": []string{}}}
	op.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).
		WithContent(openapi3.NewContentWithSchema(openapi3.NewSchema(), []string{"application/octet-stream"}))}
	return op
}

func plainOp(id, media string) *openapi3.Operation {
	op := openapi3.NewOperation()
	op.OperationID = id
	r := openapi3.NewResponse().WithDescription("OK")
	r.Content = openapi3.NewContentWithSchema(openapi3.NewSchema(), []string{media})
	op.AddResponse(200, r)
	return op
}

// schemaOf generates the schema of a Go type from its json tags, inline.
func schemaOf(t reflect.Type, doc *openapi3.T) (*openapi3.SchemaRef, error) {
	sr, err := openapi3gen.NewSchemaRefForValue(reflect.New(t).Elem().Interface(), doc.Components.Schemas)
	if err != nil {
		return nil, err
	}
	to31(sr, map[*openapi3.Schema]bool{})
	return sr, nil
}

// to31 rewrites OpenAPI 3.0's nullable (what the generator writes for pointers) as 3.1 has it: "null" among
// the types.
func to31(sr *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) {
	if sr == nil || sr.Value == nil || seen[sr.Value] {
		return
	}
	s := sr.Value
	seen[s] = true
	if s.Nullable {
		s.Nullable = false
		if s.Type != nil && !s.Type.Includes("null") {
			t := append(*s.Type, "null")
			s.Type = &t
		}
	}
	for _, p := range s.Properties {
		to31(p, seen)
	}
	to31(s.Items, seen)
	to31(s.AdditionalProperties.Schema, seen)
	for _, list := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
		for _, x := range list {
			to31(x, seen)
		}
	}
}

// docCache is the served document, built on the first request (after every Describe).
type docCache struct {
	once sync.Once
	b    []byte
	err  error
}

// handleOpenAPI serves the document, built once.
func (s *Server) handleOpenAPI(w http.ResponseWriter, _ *http.Request) {
	c := &s.doc
	c.once.Do(func() {
		doc, err := s.Document()
		if err == nil {
			c.b, c.err = json.MarshalIndent(doc, "", "  ")
		} else {
			c.err = err
		}
	})
	if c.err != nil {
		writeError(w, http.StatusInternalServerError, "internal", "openapi: "+c.err.Error(), "")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(c.b)
}
