package main

import (
	"log/slog"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/memcluster/memcluster/adapters/mem0"
	"github.com/memcluster/memcluster/server"
	"github.com/memcluster/memcluster/ui"
)

// withAdapters mounts the adapters and the console in front of the API: each is a client of the API itself
// (the adapters call the node's own handler carrying the caller's credential; the console's pages call /v1
// with the user's token), so nothing reaches the data around it.
func withAdapters(api *server.Server, log *slog.Logger) (http.Handler, error) {
	m0, err := mem0.New(mem0.Options{API: api, Logger: log})
	if err != nil {
		return nil, err
	}
	console, err := ui.New(ui.Options{})
	if err != nil {
		return nil, err
	}
	api.Describe(func(doc *openapi3.T) { m0.Describe(doc, "/mem0") })
	mux := http.NewServeMux()
	mux.Handle("/mem0/", http.StripPrefix("/mem0", m0))
	mux.Handle("/ui/", console)
	mux.Handle("/", api)
	return mux, nil
}
