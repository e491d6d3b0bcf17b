// Package workspace keeps an OpenClaw Markdown workspace (MEMORY.md, memory/*.md) indexed in memcluster: chunk, diff, sync, export and watch, all through the public API.
package workspace
