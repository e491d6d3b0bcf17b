package eval

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// streamBuffer is the read buffer of the streaming loaders.
const streamBuffer = 1 << 20

// errStop ends a stream early without an error.
var errStop = errors.New("stop")

// streamArray decodes a top-level JSON array one element at a time, so a file of hundreds of megabytes needs
// memory for one element only. fn gets the element's index; returning errStop ends the stream quietly.
func streamArray[T any](r io.Reader, fn func(i int, v *T) error) error {
	dec := json.NewDecoder(bufio.NewReaderSize(r, streamBuffer))
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("want a JSON array: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("want a JSON array, found %v", tok)
	}
	for i := 0; dec.More(); i++ {
		var v T
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("element %d (byte %d): %w", i, dec.InputOffset(), err)
		}
		if err := fn(i, &v); err != nil {
			if errors.Is(err, errStop) {
				return nil
			}
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing ]
		return fmt.Errorf("end of array: %w", err)
	}
	if tok, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return fmt.Errorf("after the array: %w", err)
		}
		return fmt.Errorf("unexpected %v after the array", tok)
	}
	return nil
}
