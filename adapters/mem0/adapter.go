package mem0

import (
	"errors"
	"log/slog"
	"net/http"
	"time"
)

// Options configures the adapter. Zero fields take the defaults stated.
type Options struct {
	// API is the node's own /v1 handler (required): every call the adapter makes goes through it, carrying
	// the caller's credential.
	API http.Handler
	// Timeout bounds each /v1 call (default 30s).
	Timeout time.Duration
	// Events bounds the add events kept for GET /v1/event/{id}/ (default 10000), each for EventTTL
	// (default 1h).
	Events   int
	EventTTL time.Duration
	Logger   *slog.Logger // default slog.Default()
	Now      func() time.Time
}

func (o Options) withDefaults() (Options, error) {
	if o.API == nil {
		return o, errors.New("mem0: Options.API is required")
	}
	if o.Timeout < 0 || o.Events < 0 || o.EventTTL < 0 {
		return o, errors.New("mem0: Options.Timeout, Events and EventTTL must not be negative")
	}
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Events == 0 {
		o.Events = 10000
	}
	if o.EventTTL == 0 {
		o.EventTTL = time.Hour
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}

// Adapter serves mem0's paths (without the /mem0 prefix the node mounts it under).
type Adapter struct {
	opts   Options
	mux    *http.ServeMux
	events *events
	routes []route // in registration order, for Describe
}

// route is one registered pattern; what is set for a 501.
type route struct{ pattern, what string }

// New returns the adapter.
func New(opts Options) (*Adapter, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	a := &Adapter{opts: opts, mux: http.NewServeMux(), events: newEvents(opts.Events, opts.EventTTL, opts.Now)}
	a.routePlatform()
	a.routeServer()
	a.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, unsupportedf("%s %s: the mem0 adapter does not serve this path (adapters/mem0/DESIGN.md lists what it serves)", r.Method, r.URL.Path))
	})
	return a, nil
}

// ServeHTTP implements http.Handler.
func (a *Adapter) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }

// handlerFunc is an adapter route: it returns the answer's status and body, or an error.
type handlerFunc func(r *http.Request, c *call) (int, any, error)

// handle registers pattern; each request gets a /v1 client carrying its credential.
func (a *Adapter) handle(pattern string, h handlerFunc) {
	a.routes = append(a.routes, route{pattern: pattern})
	a.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		c, err := a.newCall(r)
		if err == nil {
			var status int
			var body any
			if status, body, err = h(r, c); err == nil {
				writeJSON(w, status, body)
				return
			}
		}
		writeError(w, err)
	})
}

// unsupported registers pattern as a mem0 feature memcluster does not offer: 501 naming it.
func (a *Adapter) unsupported(pattern, what string) {
	a.routes = append(a.routes, route{pattern: pattern, what: what})
	a.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		writeError(w, unsupportedf("%s %s: %s", r.Method, r.URL.Path, what))
	})
}
