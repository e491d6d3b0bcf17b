// Package mcp serves memcluster's memory to agents over the Model Context Protocol: tools that are clients of the public /v1 API.
package mcp
