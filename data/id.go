package data

import (
	"crypto/rand"
	"encoding/binary"
	"io"
	"strings"
	"sync"
	"time"
)

// Id prefixes (conventions §3).
const (
	PrefixUser          = "usr_"
	PrefixWorkspace     = "ws_"
	PrefixAgent         = "agt_"
	PrefixKnowledgeBase = "kb_"
	PrefixSource        = "src_"
	PrefixNumber        = "num_"
	PrefixCall          = "call_"
	PrefixWebhook       = "wh_"
	PrefixEvent         = "evt_"
	PrefixDelivery      = "dlv_"
	PrefixConversation  = "conv_"
)

// idLen is the length of the time-ordered part of an id: 10 characters of milliseconds and
// 16 of randomness in Crockford base32, as in a ULID.
const idLen = 26

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// IDGen makes time-ordered ids. Within one millisecond it increments the random part, so
// byte order is creation order within a process and ids serve directly as bbolt keys.
type IDGen struct {
	Now  func() time.Time
	Rand io.Reader

	mu       sync.Mutex
	lastMS   uint64
	lastRand [10]byte
}

// NewIDGen returns a generator on the wall clock and crypto/rand.
func NewIDGen() *IDGen { return &IDGen{Now: time.Now, Rand: rand.Reader} }

// New returns a new id with the given prefix.
func (g *IDGen) New(prefix string) string {
	g.mu.Lock()
	ms := uint64(g.Now().UnixMilli())
	if ms <= g.lastMS {
		ms = g.lastMS
		incr(g.lastRand[:])
	} else {
		g.lastMS = ms
		if _, err := io.ReadFull(g.Rand, g.lastRand[:]); err != nil {
			panic("voiceapi: reading randomness: " + err.Error())
		}
		g.lastRand[0] &= 0x7f // leave room to increment without overflow
	}
	var raw [16]byte
	binary.BigEndian.PutUint64(raw[:8], ms<<16)
	copy(raw[6:], g.lastRand[:])
	g.mu.Unlock()
	return prefix + encodeBase32(raw)
}

func incr(b []byte) {
	for i := len(b) - 1; i >= 0; i-- {
		b[i]++
		if b[i] != 0 {
			return
		}
	}
}

// encodeBase32 writes 128 bits as 26 Crockford characters (the first carries 3 bits).
func encodeBase32(raw [16]byte) string {
	hi := binary.BigEndian.Uint64(raw[:8])
	lo := binary.BigEndian.Uint64(raw[8:])
	var out [idLen]byte
	for i := idLen - 1; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// ValidID reports whether id has the given prefix and a well-formed time-ordered part.
// A path id of the wrong shape is simply not found.
func ValidID(prefix, id string) bool {
	if len(id) != len(prefix)+idLen || id[:len(prefix)] != prefix {
		return false
	}
	for i := len(prefix); i < len(id); i++ {
		c := id[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z') || c == 'I' || c == 'L' || c == 'O' || c == 'U' {
			return false
		}
	}
	return id[len(prefix)] <= '7'
}

// MadeBefore reports whether id a was made before id b by the same IDGen, whatever their
// prefixes: the part after the prefix orders ids by creation, within a millisecond too.
func MadeBefore(a, b string) bool {
	_, ra, _ := strings.Cut(a, "_")
	_, rb, _ := strings.Cut(b, "_")
	return ra < rb
}
