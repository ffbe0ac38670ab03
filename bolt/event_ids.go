package bolt

import (
	"encoding/binary"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// Ids in 16 raw bytes. An id made by data.IDGen is a prefix and 26 Crockford base32
// characters for 128 bits; the binary stored forms (events_binary.go) keep the bits and
// not the 26 characters.

const crockfordDigits = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// crockfordValues maps a digit to its value; 0xFF for any other byte.
var crockfordValues = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xFF
	}
	for i := range len(crockfordDigits) {
		t[crockfordDigits[i]] = byte(i)
	}
	return t
}()

// idRaw returns the 128 bits of id, which must be a well-formed id of prefix
// (data.ValidID): then idText gives id back exactly.
func idRaw(prefix, id string) (raw [16]byte, ok bool) {
	if !data.ValidID(prefix, id) {
		return raw, false
	}
	var hi, lo uint64
	for i := len(prefix); i < len(id); i++ {
		hi = hi<<5 | lo>>59
		lo = lo<<5 | uint64(crockfordValues[id[i]])
	}
	binary.BigEndian.PutUint64(raw[:8], hi)
	binary.BigEndian.PutUint64(raw[8:], lo)
	return raw, true
}

// idText is the id of prefix whose 128 bits are raw (16 bytes).
func idText(prefix string, raw []byte) string {
	hi, lo := binary.BigEndian.Uint64(raw[:8]), binary.BigEndian.Uint64(raw[8:16])
	var out [26]byte
	for i := 25; i >= 0; i-- {
		out[i] = crockfordDigits[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	var b strings.Builder
	b.Grow(len(prefix) + len(out))
	b.WriteString(prefix)
	b.Write(out[:])
	return b.String()
}

// idMillis returns the creation time in Unix milliseconds that a well-formed id of prefix
// carries in its first ten digits (data.IDTime); ok is false for any other id.
func idMillis(prefix, id string) (ms int64, ok bool) {
	if !data.ValidID(prefix, id) {
		return 0, false
	}
	for _, c := range []byte(id[len(prefix) : len(prefix)+10]) {
		ms = ms<<5 | int64(crockfordValues[c])
	}
	return ms, true
}
