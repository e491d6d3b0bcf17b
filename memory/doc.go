// Package memory defines the memory record, its kinds and the validation every entry point applies.
package memory
