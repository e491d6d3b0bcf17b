// Package llm is the optional LLM side of the memory model: a client for any
// OpenAI-compatible /chat/completions endpoint (chat.go) and an Extractor (extract.go)
// that asks a chat model for the facts in one user message and returns them as
// consolidation candidates — a drop-in consolidation.ExtractFunc.
//
// The model's answer is untrusted input. It must be exactly one JSON object of the
// documented shape (schema.go): unknown keys, missing keys, a predicate that is not
// snake_case, a polarity outside positive/negative, over-long text or more than 20 facts
// reject the whole answer. Whatever goes wrong — transport, HTTP status, timeout, non-JSON,
// schema — the message falls back to the deterministic rules (consolidation.Extract), the
// failure is logged at Warn with its reason and counted in
// memcluster_llm_extract_fallbacks_total{reason}; nothing is silently dropped. Valid answers
// count in memcluster_llm_extract_total. A breaker pauses calls after repeated provider
// failures so a dead provider does not cost every flush a timeout per message.
//
// The extractor runs on the node that receives the request, before a command is proposed,
// so its non-determinism never reaches the replicas. The API key is sent as a Bearer token
// and never logged; server error messages that echo it are masked.
package llm
