package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/bolt"
)

// countWorkspaceRecords scans every bucket for a key or value naming workspaceID and
// describes what it finds ("" when nothing).
func (e *env) countWorkspaceRecords(workspaceID string) string {
	var found []string
	err := e.bolt().Bolt().View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			return b.ForEach(func(k, v []byte) error {
				plain, err := bolt.StoredJSON(v) // long values are stored deflated
				if string(name) == "events" {
					plain, err = bolt.StoredEventJSON(string(k), v) // binary events too
				}
				if err == nil {
					v = plain
				} // else not a stored record (a binary value that starts with a mark): as it is
				if bytes.Contains(k, []byte(workspaceID)) || bytes.Contains(v, []byte(workspaceID)) {
					found = append(found, fmt.Sprintf("%s/%q", name, k))
				}
				return nil
			})
		})
	})
	if err != nil {
		return err.Error()
	}
	return strings.Join(found, ", ")
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
