// Package eval holds the pure parts of the retrieval-quality harness behind `memctl eval`: the LoCoMo and
// LongMemEval loaders, evidence-id normalisation, the exact date parsers of both datasets, the search modes,
// and the recall metrics. Nothing here talks to a cluster; cmd/memctl drives ingestion and queries.
//
// The datasets are read by path and never copied into this repository (LoCoMo is CC BY-NC 4.0); tests refer to
// them as ../shared/data/... relative to the repository root.
package eval
