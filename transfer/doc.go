// Package transfer exports users' memory to JSON Lines and imports it back, as a client of the /v1 API.
package transfer
