package bolt

import (
	"encoding/json"
	"fmt"

	"go.etcd.io/bbolt"
)

// getJSON decodes the record under key into v; it reports false when there is none.
func getJSON(b *bbolt.Bucket, key []byte, v any) (bool, error) {
	raw := b.Get(key)
	if raw == nil {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
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
	return b.Put(key, raw)
}

func bucketName(b *bbolt.Bucket) string {
	if b == nil {
		return "?"
	}
	return fmt.Sprintf("bucket(root %d)", b.Root())
}

func jsonUnmarshal(raw []byte, v any) error { return json.Unmarshal(raw, v) }
