package workspace

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memcluster/memcluster/apiv1"
)

// rebuild puts a file back together from its overlapping chunks, as the server does.
func rebuild(t *testing.T, chunks []Chunk) string {
	t.Helper()
	var b strings.Builder
	for i, c := range chunks {
		if c.StartByte > b.Len() || c.EndByte <= b.Len() || c.Text != "" && hashHex(c.Text) != c.Hash {
			t.Fatalf("chunk %d (%d..%d) does not continue %d bytes", i, c.StartByte, c.EndByte, b.Len())
		}
		b.WriteString(c.Text[b.Len()-c.StartByte:])
	}
	return b.String()
}

func TestSplitRebuildsEveryFileByteForByte(t *testing.T) {
	long := strings.Repeat("é", 5000) // one line of 5000 characters, 10000 bytes
	for name, content := range map[string]string{
		"empty":           "",
		"one line":        "hello",
		"final newline":   "a\nb\n",
		"blank lines":     "\n\n\n",
		"crlf":            "one\r\ntwo\r\n",
		"long line":       "start\n" + long + "\nend",
		"many lines":      strings.Repeat("- the staging API key is rotated weekly\n", 300),
		"no final eol":    strings.Repeat("word ", 2000),
		"multibyte lines": strings.Repeat("日本語のメモ\n", 500),
	} {
		t.Run(name, func(t *testing.T) {
			chunks := Split(content, apiv1.DefaultChunkParams)
			if got := rebuild(t, chunks); got != content {
				t.Fatalf("rebuilt %d bytes, want %d", len(got), len(content))
			}
			for _, c := range chunks {
				if n := utf8.RuneCountInString(c.Text); n > 2*1600+2 { // a carried piece of a long line plus the next
					t.Errorf("chunk %d..%d has %d characters", c.StartLine, c.EndLine, n)
				}
				if !utf8.ValidString(c.Text) {
					t.Errorf("chunk %d..%d cut a character", c.StartLine, c.EndLine)
				}
			}
		})
	}
}

func TestSplitOverlapsAndNumbersLines(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 200; i++ {
		b.WriteString(strings.Repeat("x", 39) + "\n") // 40 characters with the line end
	}
	chunks := Split(b.String(), apiv1.DefaultChunkParams)
	// 1600 characters per chunk: 40 lines; the next starts with the last 8 lines (320 characters).
	if len(chunks) < 5 || chunks[0].StartLine != 1 || chunks[0].EndLine != 40 || chunks[1].StartLine != 33 {
		t.Fatalf("chunks: %d, first %d..%d, second from %d", len(chunks), chunks[0].StartLine, chunks[0].EndLine,
			chunks[1].StartLine)
	}
	if last := chunks[len(chunks)-1]; last.EndLine != 200 || last.EndByte != b.Len() {
		t.Fatalf("last chunk ends at line %d byte %d", last.EndLine, last.EndByte)
	}
	if c := Split("a\nb\n", apiv1.DefaultChunkParams); len(c) != 1 || c[0].EndLine != 2 {
		t.Fatalf("a final line end started a line: %+v", c)
	}
}

func TestChunkParamsJoinTheFingerprint(t *testing.T) {
	a := apiv1.WorkspaceFingerprint("hashed-v1/d256", apiv1.DefaultChunkParams)
	b := apiv1.WorkspaceFingerprint("hashed-v1/d256", apiv1.ChunkParams{Tokens: 400, Overlap: 40})
	c := apiv1.WorkspaceFingerprint("openai/x", apiv1.DefaultChunkParams)
	if a == b || a == c {
		t.Fatalf("fingerprints %s %s %s", a, b, c)
	}
}
