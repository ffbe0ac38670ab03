package bolt

import (
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

// PutIdempotentResponse implements service.AccountTx.
func (t tx) PutIdempotentResponse(tokenID int64, key string, r *data.IdempotentResponse) error {
	return putJSON(t.b.Bucket(bucketIdempotency), idempotencyKey(tokenID, key), r)
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
		n++
	}
	return n, nil
}
