// Package tenant carries the identity a request was authorized for across the node boundary, so a shard checks it again on the command it executes.
package tenant
