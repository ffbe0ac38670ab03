package bolt

import (
	"bytes"
	"compress/flate"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// Stored values are JSON, and those of compressMin bytes or more are kept deflated
// behind a one-byte mark (issue 17: an agent's row and each event's copy of it were 8 KB
// of JSON apiece, mostly member names and nulls repeated tool after tool; deflated they
// take a fifth of that, and the page writes of a commit shrink with them). JSON never
// starts with a mark, so values written before stay readable as they are. Read every
// value through decodeValue (getJSON and jsonUnmarshal do).
//
// Values are written with markDeflateDict1: deflated against deflateDictV1, the member
// names and shape of an agent, a call and a call event (deflate_dict_v1.json). A value of
// a few hundred bytes has too little text of its own to repeat, so its member names were
// most of what it stored; against the dictionary they cost a few bits each (a call 508
// bytes stored against 318, an event 691 against 445, an agent 1,664 against 1,014, on
// the bench seeder's records). markDeflate values (no dictionary, written before) stay
// readable.
const (
	markDeflate      = 0x01
	markDeflateDict1 = 0x02
	compressMin      = 256
	// deflateLevel: level 1 (flate.BestSpeed) is a separate encoder that ignores a
	// dictionary; 2 is the fastest that uses it.
	deflateLevel = 2
)

// deflateDictV1 must never change: every value written with markDeflateDict1 needs its
// exact bytes to inflate (TestDeflateDictIsFrozen). A better dictionary gets a new mark.
//
//go:embed deflate_dict_v1.json
var deflateDictV1 []byte

var (
	deflaters = sync.Pool{New: func() any {
		w, _ := flate.NewWriterDict(nil, deflateLevel, deflateDictV1)
		return w
	}}
	inflaters = sync.Pool{New: func() any { return flate.NewReader(nil) }}
)

// encodeValue returns the bytes to store for the JSON raw: raw itself when it is short
// or does not shrink, else markDeflateDict1 and raw deflated.
func encodeValue(raw []byte) []byte {
	if len(raw) < compressMin {
		return raw
	}
	var buf bytes.Buffer
	buf.Grow(len(raw)/3 + 16)
	buf.WriteByte(markDeflateDict1)
	var err error
	if len(raw) >= fastDeflateMin {
		err = deflateFast(&buf, raw) // record_fast.go
	} else {
		w := deflaters.Get().(*flate.Writer)
		w.Reset(&buf) // keeps the writer's dictionary
		_, err = w.Write(raw)
		if err == nil {
			err = w.Close()
		}
		deflaters.Put(w)
	}
	if err != nil || buf.Len() >= len(raw) {
		return raw
	}
	return buf.Bytes()
}

// deflated reports whether a stored value is deflated (either mark).
func deflated(v []byte) bool {
	return len(v) > 0 && (v[0] == markDeflate || v[0] == markDeflateDict1)
}

// decodeValue returns the JSON of a stored value (a new slice when it was deflated, else
// v itself: valid only during the transaction).
func decodeValue(v []byte) ([]byte, error) {
	if !deflated(v) {
		return v, nil
	}
	out := bytes.NewBuffer(make([]byte, 0, 4*len(v)))
	if err := inflateInto(out, v); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// getJSON decodes the record under key into v; it reports false when there is none.
func getJSON(b *bbolt.Bucket, key []byte, v any) (bool, error) {
	raw := b.Get(key)
	if raw == nil {
		return false, nil
	}
	if err := jsonUnmarshal(raw, v); err != nil {
		return false, fmt.Errorf("decoding %s/%s: %w", bucketName(b), key, err)
	}
	return true, nil
}

// putJSON encodes v under key.
func putJSON(b *bbolt.Bucket, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", key, err)
	}
	return b.Put(key, encodeValue(raw))
}

func bucketName(b *bbolt.Bucket) string {
	if b == nil {
		return "?"
	}
	return fmt.Sprintf("bucket(root %d)", b.Root())
}

// jsonUnmarshal decodes a stored value, deflated or not, into v. A deflated one is
// inflated into a pooled buffer: encoding/json copies what it keeps (strings,
// RawMessage), so the buffer is free again once Unmarshal returns. A page of 100 calls
// inflated 200 KB a request into fresh buffers, a third of what it allocated, and the
// collections that allocation paid for were a cause of its tail latency. Numbers in
// free-form values come back as written (data.DecodeJSON), never rounded to float64.
func jsonUnmarshal(stored []byte, v any) error {
	return withInflated(stored, func(plain []byte) error { return data.DecodeJSON(plain, v) })
}

// storedContains reports whether the stored value, deflated or not, holds part, inflating
// into a pooled buffer as jsonUnmarshal does: a cheap test before a decode.
func storedContains(stored, part []byte) (bool, error) {
	found := false
	err := withInflated(stored, func(plain []byte) error {
		found = bytes.Contains(plain, part)
		return nil
	})
	return found, err
}

// withInflated calls use with the stored value as written: stored itself, or inflated
// into a pooled buffer, which is valid only until use returns.
func withInflated(stored []byte, use func(plain []byte) error) error {
	if !deflated(stored) {
		return use(stored)
	}
	buf := inflateBufs.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledInflate {
			inflateBufs.Put(buf)
		}
	}()
	buf.Reset()
	if err := inflateInto(buf, stored); err != nil {
		return err
	}
	return use(buf.Bytes())
}

// inflateBufs are the scratch buffers of jsonUnmarshal.
var inflateBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledInflate is the largest scratch buffer kept for reuse: records are a few KB
// (an agent with many tools some tens), events of megabytes are rare.
const maxPooledInflate = 256 << 10

// inflating returns a pooled reader of the JSON of the deflated stored value v (mark
// byte first); release returns it to the pool.
func inflating(v []byte) (r io.ReadCloser, release func(), err error) {
	var dict []byte
	if v[0] == markDeflateDict1 {
		dict = deflateDictV1
	}
	r = inflaters.Get().(io.ReadCloser)
	release = func() { inflaters.Put(r) }
	if err := r.(flate.Resetter).Reset(bytes.NewReader(v[1:]), dict); err != nil {
		release()
		return nil, nil, err
	}
	return r, release, nil
}

// inflateInto appends the JSON of the deflated stored value v (mark byte first) to out.
func inflateInto(out *bytes.Buffer, v []byte) error {
	r, release, err := inflating(v)
	if err != nil {
		return err
	}
	defer release()
	if _, err := out.ReadFrom(r); err != nil {
		return fmt.Errorf("inflating a stored value: %w", err)
	}
	return nil
}

// StoredJSON returns the JSON of a value as stored in a bucket, deflated or not, for
// whoever reads the file without this package's accessors (tests, forensics). A value
// put back as plain JSON reads as well. An event stored as a reference (events_ref.go,
// events_callref.go: first byte 0x03 or 0x04) or in the binary form (events_binary.go:
// 0x05 to 0x07) is returned as stored, not as JSON: StoredEventJSON reads those.
func StoredJSON(v []byte) ([]byte, error) { return decodeValue(v) }
