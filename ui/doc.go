// Package ui serves the web console: static assets embedded in the binary, a client of the public /v1 API.
package ui
