package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"

	"github.com/memcluster/memcluster/apiv1"
)

// Chunk is a run of lines of a file: its 1-based inclusive line range, its byte range [StartByte, EndByte)
// and those bytes with their SHA-256.
type Chunk struct {
	StartLine, EndLine int
	StartByte, EndByte int
	Text, Hash         string
}

// entry is one line, or one piece of a line longer than a chunk, with its line end when it has one.
type entry struct {
	line       int
	start, end int // bytes of the file
	chars      int // characters, without the line end
}

// Split chunks content as OpenClaw's chunker does: lines are gathered until about Tokens×4 characters, a
// line longer than that is cut into pieces, and each chunk starts with the last lines of the one before
// worth at least Overlap×4 characters. Unlike the reference, a chunk is the file's exact bytes (line ends
// kept), so the chunks rebuild the file byte for byte, and a final line end does not start an empty line.
func Split(content string, p apiv1.ChunkParams) []Chunk {
	maxChars, overlapChars := max(32, p.Tokens*4), max(0, p.Overlap*4)
	var chunks []Chunk
	var cur []entry
	curChars := 0
	flush := func() {
		if len(cur) > 0 {
			first, last := cur[0], cur[len(cur)-1]
			text := content[first.start:last.end]
			chunks = append(chunks, Chunk{StartLine: first.line, EndLine: last.line, StartByte: first.start,
				EndByte: last.end, Text: text, Hash: hashHex(text)})
		}
	}
	carry := func() {
		acc, keep := 0, len(cur)
		for keep > 0 && overlapChars > 0 && acc < overlapChars {
			keep--
			acc += cur[keep].chars + 1
		}
		cur, curChars = append([]entry(nil), cur[keep:]...), acc
	}
	for _, e := range entries(content, maxChars) {
		if size := e.chars + 1; curChars+size > maxChars && len(cur) > 0 {
			flush()
			carry()
		}
		cur, curChars = append(cur, e), curChars+e.chars+1
	}
	flush()
	return chunks
}

// entries lists the lines of content, each cut into pieces of at most maxChars characters.
func entries(content string, maxChars int) []entry {
	var out []entry
	for line, off := 1, 0; off < len(content); line++ {
		end := len(content)
		if i := strings.IndexByte(content[off:], '\n'); i >= 0 {
			end = off + i + 1
		}
		body := strings.TrimSuffix(content[off:end], "\n")
		if body == "" {
			out = append(out, entry{line: line, start: off, end: end})
		}
		for pos := off; pos < off+len(body); {
			n, chars := pos, 0
			for n < off+len(body) && chars < maxChars {
				_, w := utf8.DecodeRuneInString(content[n:])
				n, chars = n+w, chars+1
			}
			pieceEnd := n
			if n == off+len(body) {
				pieceEnd = end // the last piece carries the line end
			}
			out = append(out, entry{line: line, start: pos, end: pieceEnd, chars: chars})
			pos = n
		}
		off = end
	}
	return out
}

func hashHex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
