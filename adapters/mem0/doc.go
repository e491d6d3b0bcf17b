// Package mem0 serves mem0's HTTP APIs (the self-hosted server's and the platform's v1/v2/v3 paths) as a client of memcluster's /v1 API.
package mem0
