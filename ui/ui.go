package ui

import (
	"embed"
	"errors"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed assets
var assets embed.FS

// ErrPrefix is returned for a mount prefix that is not an absolute path ending in a slash.
var ErrPrefix = errors.New("ui: prefix must start and end with /")

// Options configures the console handler.
type Options struct {
	// Prefix is the path the console is mounted at (default "/ui/"). The handler strips it.
	Prefix string
}

// New returns the handler of the console's static files. It serves no data: the page's scripts call /v1 with
// the token the user gives them, like any other client.
func New(opts Options) (http.Handler, error) {
	if opts.Prefix == "" {
		opts.Prefix = "/ui/"
	}
	if !strings.HasPrefix(opts.Prefix, "/") || !strings.HasSuffix(opts.Prefix, "/") {
		return nil, ErrPrefix
	}
	root, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	files := http.StripPrefix(opts.Prefix, http.FileServerFS(root))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		// Scripts and styles from this origin only, no inline code, no framing: a page that holds a token must
		// not run anything else.
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	}), nil
}
