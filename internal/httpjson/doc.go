// Package httpjson writes JSON answers with their length and reads JSON answers whole into encoding/json's semantics on a faster decoder.
package httpjson
