package conversation

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// FunctionKeyHeader is the header a custom function's request carries its idempotency
// key in (Stripe's, and the IETF httpapi draft's, name for it).
const FunctionKeyHeader = "Idempotency-Key"

// FunctionKeyPrefix starts every key voiceapi sends, so that a receiver's logs show where
// a key came from; 32 hex digits follow.
const FunctionKeyPrefix = "voiceapi_fn_"

// functionKeys names the custom function calls of one answer. A key is derived from the
// conversation's id, the count of items stored before the message (a message answered
// again after an answer that stored nothing, a replica's crash or a failure, finds the
// same count), the message's text, the function's name and the ordinal of this call of
// it within the answer, across all its steps. So a receiver that deduplicates on the key
// carries out each side effect of a message once however often the message is answered,
// while every other call has a key of its own.
//
// The text tells apart two messages at one place, which happens only when a stored turn
// is lost after its functions were called (a database restored from a backup, a
// PostgreSQL failover to a replica behind): the next message is another request and
// must not be deduplicated into the lost one's.
//
// The name is part of the key, and the ordinal counts the calls of that function only:
// a model is not deterministic, and a re-answer that calls another function first must
// not hand that one the key of the call it replaces.
type functionKeys struct {
	scope    string         // the conversation's id; "" gives no key (see next)
	position int            // the items stored before the message
	message  string         // the message's text
	calls    map[string]int // the calls of each function so far in this answer
}

// functionKeys starts the keys of an answer to the message text after st.
func (e *Engine) functionKeys(st State, text string) *functionKeys {
	return &functionKeys{scope: e.Facts.CallID, position: len(st.Items), message: text, calls: map[string]int{}}
}

// next counts a call of the function named name and returns its key. Without a scope it
// returns "" (no header): a key shared by the calls of different conversations would let a
// receiver drop a side effect it was asked for.
func (k *functionKeys) next(name string) string {
	if k == nil || k.scope == "" {
		return ""
	}
	k.calls[name]++
	return functionKey(k.scope, k.position, k.message, name, k.calls[name])
}

// functionKey hashes the parts (NUL-separated: no id, count or tool name holds a NUL) so
// that the key says nothing of the conversation to the receiver, who is often another
// company, has one length, and needs no escaping; it holds no secret.
func functionKey(scope string, position int, message, name string, ordinal int) string {
	h := sha256.New()
	for _, part := range []string{"voiceapi custom function call v1", scope, strconv.Itoa(position), name, strconv.Itoa(ordinal)} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	// The message last and whole: it is the one part that may hold a NUL.
	h.Write([]byte(message))
	return FunctionKeyPrefix + hex.EncodeToString(h.Sum(nil)[:16])
}
