// Package embed turns texts into L2-normalised vectors: a built-in hashed embedder, an OpenAI-compatible client, a Model2Vec loader and an LRU cache.
package embed
