// Package openaihttp is the HTTP client loop shared by the OpenAI-compatible providers (embeddings, chat): one
// JSON POST with a per-attempt timeout, retries of 429s, 5xx and transport errors with jittered exponential
// backoff or the server's Retry-After, bounded answers, and error messages dug out of the shapes servers use,
// with the API key masked.
package openaihttp
