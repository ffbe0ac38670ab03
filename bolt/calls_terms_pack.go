package bolt

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"sync"
)

// A call's stored terms (bucketCallTerms) are "<term>\x00<tf>" after one another, the
// terms in byte order. Since schema 3 they are kept deflated behind a zero byte, which no
// plain list starts with (a term is never empty and holds no zero byte): a list of a
// seeded call's 51 terms took 333 bytes, deflated 218. A list that does not shrink is kept
// plain, and plain lists written before read as they are.
const markPackedTerms = 0x00

var termDeflaters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.DefaultCompression)
	return w
}}

// packTerms returns the stored form of an encoded term list.
func packTerms(plain []byte) []byte {
	var buf bytes.Buffer
	buf.WriteByte(markPackedTerms)
	w := termDeflaters.Get().(*flate.Writer)
	w.Reset(&buf)
	_, err := w.Write(plain)
	if err == nil {
		err = w.Close()
	}
	termDeflaters.Put(w)
	if err != nil || buf.Len() >= len(plain) {
		return plain
	}
	return buf.Bytes()
}

// storedTerms decodes a stored term list, packed or plain (nil: none).
func storedTerms(v []byte) (map[string]int, error) {
	if len(v) == 0 || v[0] != markPackedTerms {
		return decodeTerms(v), nil
	}
	r := inflaters.Get().(io.ReadCloser)
	defer inflaters.Put(r)
	if err := r.(flate.Resetter).Reset(bytes.NewReader(v[1:]), nil); err != nil {
		return nil, err
	}
	plain, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("inflating stored terms: %w", err)
	}
	return decodeTerms(plain), nil
}
