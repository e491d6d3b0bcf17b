// Package vector is an exact in-memory vector index, partitioned by namespace, scored by dot product.
package vector
