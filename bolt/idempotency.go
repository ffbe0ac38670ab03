package bolt

import (
	"bytes"
	"encoding/binary"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

func idempotencyKey(tokenID int64, key string) []byte {
	k := make([]byte, 8, 8+len(key))
	binary.BigEndian.PutUint64(k, uint64(tokenID))
	return append(k, key...)
}

// IdempotentResponse implements service.AccountTx.
func (t tx) IdempotentResponse(tokenID int64, key string) (*data.IdempotentResponse, error) {
	var r data.IdempotentResponse
	found, err := getJSON(t.b.Bucket(bucketIdempotency), idempotencyKey(tokenID, key), &r)
	if err != nil || !found {
		return nil, err
	}
	return &r, nil
}

// conversationResponseKey is r's entry in bucketIdempotencyByConversation:
// "<conversation id>\x00<token id><key>".
func conversationResponseKey(conversationID string, k []byte) []byte {
	return append(append([]byte(conversationID), 0), k...)
}

// PutIdempotentResponse implements service.AccountTx. A response to a message is listed
// under its conversation too, for DeleteConversationResponses.
func (t tx) PutIdempotentResponse(tokenID int64, key string, r *data.IdempotentResponse) error {
	k := idempotencyKey(tokenID, key)
	if r.ConversationID != "" {
		if err := t.b.Bucket(bucketIdempotencyByConversation).Put(conversationResponseKey(r.ConversationID, k), nil); err != nil {
			return err
		}
	}
	return putJSON(t.b.Bucket(bucketIdempotency), k, r)
}

// DeleteConversationResponses implements service.AccountTx.
func (t tx) DeleteConversationResponses(conversationID string) (int, error) {
	byConv, responses := t.b.Bucket(bucketIdempotencyByConversation), t.b.Bucket(bucketIdempotency)
	prefix := conversationResponseKey(conversationID, nil)
	n := 0
	c := byConv.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
		var r data.IdempotentResponse
		if found, err := getJSON(responses, k[len(prefix):], &r); err != nil {
			return n, err
		} else if found && r.ConversationID == conversationID {
			if err := responses.Delete(k[len(prefix):]); err != nil {
				return n, err
			}
			n++
		}
		if err := c.Delete(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// DeleteIdempotentResponsesBefore implements service.AccountTx. An entry that does not
// decode goes too: it could never be replayed.
func (t tx) DeleteIdempotentResponsesBefore(before time.Time) (int, error) {
	n := 0
	c := t.b.Bucket(bucketIdempotency).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var r data.IdempotentResponse
		if err := jsonUnmarshal(v, &r); err == nil && !r.CreatedAt.Before(before) {
			continue
		}
		if err := c.Delete(); err != nil {
			return n, err
		}
		if r.ConversationID != "" {
			if err := t.b.Bucket(bucketIdempotencyByConversation).Delete(conversationResponseKey(r.ConversationID, k)); err != nil {
				return n, err
			}
		}
		n++
	}
	return n, nil
}
