package mem0

import (
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Describe adds the adapter's routes, mounted under prefix, to an OpenAPI document. Their bodies are mem0's
// (mem0's own OpenAPI document has the schemas); the description says what memcluster does with them.
// Patterns for a whole subtree (a family of platform paths answered 501) cannot be written as OpenAPI paths
// and are listed in the document's description instead.
func (a *Adapter) Describe(doc *openapi3.T, prefix string) {
	var subtrees []string
	for _, r := range a.routes {
		method, path, ok := strings.Cut(r.pattern, " ")
		if !ok || strings.HasSuffix(path, "/") && !strings.HasSuffix(path, "{$}") {
			subtrees = append(subtrees, r.pattern)
			continue
		}
		path = prefix + strings.TrimSuffix(path, "{$}")
		doc.AddOperation(path, method, operation(method, path, r.what))
	}
	doc.Components.SecuritySchemes["mem0Token"] = SecurityScheme()
	doc.Info.Description += "\n\nmem0 paths answered 501 (whole subtrees, under " + prefix + "): " + strings.Join(subtrees, ", ") + "."
}

func operation(method, path, what string) *openapi3.Operation {
	op := openapi3.NewOperation()
	op.OperationID = "mem0 " + method + " " + path
	op.Tags = []string{"mem0"}
	errResp := openapi3.NewResponse().WithDescription("an error naming the problem: {detail, error, code}").
		WithJSONSchema(openapi3.NewObjectSchema())
	if what != "" {
		op.Summary = "not supported: " + what
		op.Responses = openapi3.NewResponses()
		op.Responses.Set("501", &openapi3.ResponseRef{Value: errResp})
		return op
	}
	op.Summary = "mem0-compatible: shapes as in mem0's OpenAPI document (adapters/mem0/DESIGN.md)"
	op.Security = &openapi3.SecurityRequirements{{"mem0Token": []string{}}}
	for _, seg := range strings.Split(path, "/") {
		if strings.HasPrefix(seg, "{") {
			op.AddParameter(openapi3.NewPathParameter(strings.Trim(seg, "{}")).WithSchema(openapi3.NewStringSchema()))
		}
	}
	if method == "POST" || method == "PUT" || (method == "DELETE" && strings.Contains(path, "batch")) {
		op.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().
			WithJSONSchema(openapi3.NewSchema())}
	}
	op.AddResponse(200, openapi3.NewResponse().WithDescription("OK").WithJSONSchema(openapi3.NewSchema()))
	op.AddResponse(0, errResp)
	return op
}

// SecurityScheme is the credential mem0's clients send: "Authorization: Token <memcluster token>" (or
// X-API-Key), mapped onto the bearer token of the /v1 calls.
func SecurityScheme() *openapi3.SecuritySchemeRef {
	return &openapi3.SecuritySchemeRef{Value: openapi3.NewSecurityScheme().WithType("apiKey").WithIn("header").
		WithName("Authorization").WithDescription("Token <memcluster token>; X-API-Key: <token> works too")}
}
