package bolt

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"time"
	"unicode/utf8"

	"github.com/voiceapi/voiceapi/data"
)

// The binary stored form of an event (schema 4). An event's envelope is ids, a type, a
// time and two hashes: as JSON, even deflated, it took about 200 bytes, twice its
// information. The binary form keeps each member in its own bytes:
//
//	0       mark: markEventBinary (the payload follows), markEventRefBinary (the id of
//	        the event holding the payload follows, events_ref.go) or markCallRefBinary
//	        (the id of the call whose stored bytes are the payload, events_callref.go)
//	1..16   workspace id, 16 raw bytes (at a fixed offset: EventWorkspace reads only it)
//	17      type: its index in eventTypeCodes
//	18      actor: bits 0-1 its type (index in actorTypeCodes); bit 2 a user id follows,
//	        bit 3 a token id, bit 4 an address
//	19      chain: prev_hash's form in the high four bits, hash's in the low four
//	        (hashEmpty, hashK1)
//	20…     created_at minus the time in the event's id (its key), in milliseconds, as a
//	        zigzag varint (usually one byte: 0)
//	        [user id, 16 raw bytes] [token id, uvarint] [address: uvarint length, bytes]
//	        [prev_hash, 32 raw bytes when hashK1] [hash, 32 raw bytes when hashK1]
//	        then the payload, stored as encodeValue stores a value (markEventBinary), or
//	        the referenced id's 16 raw bytes
//
// The event's id is not stored: it is the key. An event the form cannot hold exactly
// (appendBinaryEvent says which) is stored as before, JSON or a JSON envelope, so a
// reader gets the same data.Event, and the same data.Event.AppendJSON bytes, from every
// form. The payload must be what data.Event.AppendJSON takes (json.Marshal's output).
const (
	markEventBinary    = 0x05
	markEventRefBinary = 0x06
	markCallRefBinary  = 0x07

	binaryHeadLen = 20 // mark, workspace id, type, actor, chain
)

// eventTypeCodes is FROZEN: a binary event stores its type as an index here, so an entry
// is never changed, removed or moved (TestEventTypeCodesFrozen); a new type is appended.
// A type not listed is stored in the JSON form.
var eventTypeCodes = [...]string{
	"agent.created", "agent.updated", "agent.deleted", "agent.published", "agent.restored",
	"knowledge_base.created", "knowledge_base.updated", "knowledge_base.deleted",
	"knowledge_base.source_indexed", "knowledge_base.source_failed",
	"number.created", "number.updated", "number.deleted",
	"call.registered", "call.started", "call.ended", "call.analyzed",
	"webhook.test",
	"workspace.updated", "member.added", "member.updated", "member.removed",
	"api_key.created", "api_key.revoked",
	"webhook.created", "webhook.updated", "webhook.deleted", "webhook.secret_rotated",
	"user.login", "user.login_failed", "user.password_changed", "subscription.updated",
	"workspace.exported", "workspace.imported", "backup.downloaded",
	"retention.swept",
	"price_table.updated",
	"agent_test.created", "agent_test.updated", "agent_test.deleted", "agent.published_untested",
	"test_run.queued", "test_run.started", "test_run.progress", "test_run.completed",
	"agent.rollout_updated", "agent.rollout_ended", "agent.rollout_rolled_back",
	"campaign.created", "campaign.started", "campaign.paused", "campaign.resumed", "campaign.canceled",
	"campaign.completed",
	"call.analysis_failed",
	"job.failed",
	"agent.version_deleted",
	"campaign.deleted",
}

// actorTypeCodes is FROZEN as eventTypeCodes is (data.Actor's three types).
var actorTypeCodes = [...]string{"user", "client", "system"}

var eventTypeCode = func() map[string]byte {
	m := make(map[string]byte, len(eventTypeCodes))
	for i, t := range eventTypeCodes {
		m[t] = byte(i)
	}
	return m
}()

const (
	actorTypeBits = 0x03
	actorUser     = 1 << 2
	actorToken    = 1 << 3
	actorAddress  = 1 << 4

	hashEmpty = 0 // "" (the first event of a chain has no prev_hash)
	hashK1    = 1 // "k1:" and 64 lowercase hex digits (service.ChainHash)

	hashK1Prefix = "k1:"
	// maxEventMillis is the last millisecond of year 9999, the last data.TimeLayout writes
	// in four digits.
	maxEventMillis = 253402300799999
)

// isBinaryEvent reports whether a stored event's first byte marks the binary form.
func isBinaryEvent(v []byte) bool {
	return len(v) > 0 && v[0] >= markEventBinary && v[0] <= markCallRefBinary
}

// appendBinaryEvent appends the binary form of e, all but its payload or reference, with
// mark; ok is false (dst unchanged) when the form cannot hold e exactly.
func appendBinaryEvent(dst []byte, mark byte, e *data.Event) (out []byte, ok bool) {
	idMS, ok := idMillis(data.PrefixEvent, e.ID)
	if !ok {
		return dst, false
	}
	ws, ok := idRaw(data.PrefixWorkspace, e.WorkspaceID)
	if !ok {
		return dst, false
	}
	typ, ok := eventTypeCode[e.Type]
	if !ok {
		return dst, false
	}
	ms, ok := eventMillis(e.CreatedAt)
	if !ok {
		return dst, false
	}
	actor, user, ok := actorCode(&e.Actor)
	if !ok {
		return dst, false
	}
	prevForm, prev, ok := hashRaw(e.PrevHash)
	if !ok {
		return dst, false
	}
	hashForm, hash, ok := hashRaw(e.Hash)
	if !ok {
		return dst, false
	}
	dst = append(dst, mark)
	dst = append(dst, ws[:]...)
	dst = append(dst, typ, actor, prevForm<<4|hashForm)
	dst = binary.AppendVarint(dst, ms-idMS)
	if actor&actorUser != 0 {
		dst = append(dst, user[:]...)
	}
	if actor&actorToken != 0 {
		dst = binary.AppendUvarint(dst, uint64(e.Actor.TokenID))
	}
	if actor&actorAddress != 0 {
		dst = binary.AppendUvarint(dst, uint64(len(e.Actor.Address)))
		dst = append(dst, e.Actor.Address...)
	}
	if prevForm == hashK1 {
		dst = append(dst, prev[:]...)
	}
	if hashForm == hashK1 {
		dst = append(dst, hash[:]...)
	}
	return dst, true
}

// eventMillis is t in Unix milliseconds, as data.Time's JSON keeps it (truncated), when
// that JSON is a time from 1970 to 9999.
func eventMillis(t data.Time) (int64, bool) {
	if t.IsZero() {
		return 0, false // JSON null
	}
	ms := t.UnixMilli()
	return ms, ms >= 0 && ms <= maxEventMillis
}

// actorCode is the actor byte of a and its user id's bits.
func actorCode(a *data.Actor) (code byte, user [16]byte, ok bool) {
	for i, t := range actorTypeCodes {
		if a.Type == t {
			code, ok = byte(i), true
		}
	}
	if !ok || a.TokenID < 0 || a.Address != "" && !utf8.ValidString(a.Address) {
		return 0, user, false // invalid UTF-8 would read back as U+FFFD from JSON
	}
	if a.UserID != "" {
		if user, ok = idRaw(data.PrefixUser, a.UserID); !ok {
			return 0, user, false
		}
		code |= actorUser
	}
	if a.TokenID > 0 {
		code |= actorToken
	}
	if a.Address != "" {
		code |= actorAddress
	}
	return code, user, true
}

// hashRaw is the form and the bits of a chain hash; ok is false for a form not listed.
func hashRaw(h string) (form byte, raw [32]byte, ok bool) {
	if h == "" {
		return hashEmpty, raw, true
	}
	if len(h) != len(hashK1Prefix)+64 || h[:len(hashK1Prefix)] != hashK1Prefix {
		return 0, raw, false
	}
	for i := len(hashK1Prefix); i < len(h); i++ {
		if c := h[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return 0, raw, false // hex.Decode takes upper case too, which would not come back
		}
	}
	hex.Decode(raw[:], []byte(h[len(hashK1Prefix):]))
	return hashK1, raw, true
}

var errBinaryEvent = errors.New("a binary stored event is malformed")

// decodeBinaryEvent reads the binary form v of the event id, all but what follows the
// chain hashes (rest: the payload or the referenced id).
func decodeBinaryEvent(id string, v []byte) (e data.Event, rest []byte, err error) {
	idMS, ok := idMillis(data.PrefixEvent, id)
	if !ok || len(v) < binaryHeadLen || int(v[17]) >= len(eventTypeCodes) {
		return e, nil, errBinaryEvent
	}
	actor, chain := v[18], v[19]
	if actor&^(actorTypeBits|actorUser|actorToken|actorAddress) != 0 || int(actor&actorTypeBits) >= len(actorTypeCodes) ||
		chain>>4 > hashK1 || chain&15 > hashK1 {
		return e, nil, errBinaryEvent
	}
	e.ID, e.Type = id, eventTypeCodes[v[17]]
	e.WorkspaceID = idText(data.PrefixWorkspace, v[1:17])
	e.Actor.Type = actorTypeCodes[actor&actorTypeBits]
	r := v[binaryHeadLen:]
	delta, n := binary.Varint(r)
	if n <= 0 || delta < -idMS || delta > maxEventMillis-idMS {
		return e, nil, errBinaryEvent
	}
	r = r[n:]
	e.CreatedAt = data.NewTime(time.UnixMilli(idMS + delta))
	if actor&actorUser != 0 {
		if len(r) < 16 {
			return e, nil, errBinaryEvent
		}
		e.Actor.UserID, r = idText(data.PrefixUser, r), r[16:]
	}
	if actor&actorToken != 0 {
		token, n := binary.Uvarint(r)
		if n <= 0 || token == 0 || token > math.MaxInt64 {
			return e, nil, errBinaryEvent
		}
		e.Actor.TokenID, r = int64(token), r[n:]
	}
	if actor&actorAddress != 0 {
		size, n := binary.Uvarint(r)
		if n <= 0 || size == 0 || uint64(len(r)-n) < size || !utf8.Valid(r[n:n+int(size)]) {
			return e, nil, errBinaryEvent
		}
		e.Actor.Address, r = string(r[n:n+int(size)]), r[n+int(size):]
	}
	if e.PrevHash, r, ok = hashText(chain>>4, r); !ok {
		return e, nil, errBinaryEvent
	}
	if e.Hash, r, ok = hashText(chain&15, r); !ok {
		return e, nil, errBinaryEvent
	}
	return e, r, nil
}

// hashText reads a chain hash of form from the start of r.
func hashText(form byte, r []byte) (string, []byte, bool) {
	if form == hashEmpty {
		return "", r, true
	}
	if len(r) < 32 {
		return "", r, false
	}
	out := make([]byte, len(hashK1Prefix)+64)
	copy(out, hashK1Prefix)
	hex.Encode(out[len(hashK1Prefix):], r[:32])
	return string(out), r[32:], true
}

// binaryEventWorkspace is the workspace id of a binary stored event, read at its fixed
// offset.
func binaryEventWorkspace(v []byte) (string, error) {
	if len(v) < binaryHeadLen {
		return "", errBinaryEvent
	}
	return idText(data.PrefixWorkspace, v[1:17]), nil
}
