// Package apiv1 holds the JSON wire types of the /v1 HTTP API, shared by the server and the Go client.
package apiv1
