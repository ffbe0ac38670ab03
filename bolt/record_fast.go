package bolt

import (
	"bytes"
	"sync"

	kflate "github.com/klauspost/compress/flate"
)

// Values of fastDeflateMin bytes or more (an agent's row and its events, a few KB each)
// are deflated by github.com/klauspost/compress/flate at fastDeflateLevel, against the
// same dictionary and behind the same mark: the output is plain DEFLATE, which
// inflateInto reads as before. The standard library's encoder at level 2 clears 640 KB
// of hash tables at every Reset and was 17-24% of a full PUT's or create's CPU under
// load, all of it inside the shared commit: on one core, with every writer waiting. On
// an 8 KB agent this one took a third to a half of the time (28-30 µs against 56-87 µs)
// for 8% more bytes (1,060 against 977). Smaller values (calls and their events) keep
// the standard encoder, byte for byte: there the reset is the cost either way, and their
// bytes are what the file's size is made of.
const (
	fastDeflateMin   = 2048
	fastDeflateLevel = 3
)

var fastDeflaters = sync.Pool{New: func() any {
	w, err := kflate.NewWriterDict(nil, fastDeflateLevel, deflateDictV1)
	if err != nil {
		panic(err) // a constant level and dictionary: cannot fail
	}
	return w
}}

// deflateFast writes raw deflated against deflateDictV1 to buf.
func deflateFast(buf *bytes.Buffer, raw []byte) error {
	w := fastDeflaters.Get().(*kflate.Writer)
	defer fastDeflaters.Put(w)
	w.Reset(buf) // keeps the writer's dictionary
	if _, err := w.Write(raw); err != nil {
		return err
	}
	return w.Close()
}
