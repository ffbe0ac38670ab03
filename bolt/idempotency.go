package bolt

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// IdempotencyTTL is how long a completed response is replayed (conventions §17).
const IdempotencyTTL = 24 * time.Hour

func idempotencyKey(tokenID int64, key string) []byte {
	k := make([]byte, 8, 8+len(key))
	binary.BigEndian.PutUint64(k, uint64(tokenID))
	return append(k, key...)
}

// IdempotentResponse returns the stored response for (tokenID, key), or nil when there is
// none or it has expired.
func (db *DB) IdempotentResponse(ctx context.Context, tokenID int64, key string) (*data.IdempotentResponse, error) {
	var resp data.IdempotentResponse
	var found bool
	err := db.view(func(tx *bbolt.Tx) error {
		var err error
		found, err = getJSON(tx.Bucket(bucketIdempotency), idempotencyKey(tokenID, key), &resp)
		return err
	})
	if err != nil || !found || db.now().Sub(resp.CreatedAt.Time) > IdempotencyTTL {
		return nil, err
	}
	body, err := db.sealer.Open(string(resp.Body))
	if err != nil {
		return nil, fmt.Errorf("opening a kept response: %w", err)
	}
	resp.Body = []byte(body)
	return &resp, nil
}

// SaveIdempotentResponse keeps a successful response for replay. The body is sealed: it
// may hold a token shown once (API key create), which must not rest in plaintext (§5).
func (db *DB) SaveIdempotentResponse(ctx context.Context, tokenID int64, key string, resp *data.IdempotentResponse) error {
	resp.CreatedAt = db.timeNow()
	sealed, err := db.sealer.Seal(string(resp.Body))
	if err != nil {
		return err
	}
	stored := *resp
	stored.Body = []byte(sealed)
	return db.update(func(tx *bbolt.Tx) error {
		return putJSON(tx.Bucket(bucketIdempotency), idempotencyKey(tokenID, key), &stored)
	})
}

// PurgeIdempotency deletes expired responses; the server runs it now and then.
func (db *DB) PurgeIdempotency(ctx context.Context) (int, error) {
	n := 0
	err := db.update(func(tx *bbolt.Tx) error {
		n = 0
		c := tx.Bucket(bucketIdempotency).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			var resp data.IdempotentResponse
			if err := jsonUnmarshal(v, &resp); err != nil || db.now().Sub(resp.CreatedAt.Time) > IdempotencyTTL {
				if err := c.Delete(); err != nil {
					return err
				}
				n++
			}
		}
		return nil
	})
	return n, err
}
