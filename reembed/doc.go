// Package reembed brings stored embeddings up to date after the node's embedding model changed.
package reembed
