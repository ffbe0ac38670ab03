package bolt

import (
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// BulkWorkspaces makes n workspaces owned by ownerID in one transaction: a fast way to
// build a large collection for benchmarks.
func (db *DB) BulkWorkspaces(ownerID string, n int) error {
	return db.bolt.Update(func(tx *bbolt.Tx) error {
		for i := 0; i < n; i++ {
			if _, err := db.insertWorkspace(tx, ownerID, data.WorkspaceCreate{Name: fmt.Sprint("bulk ", i)}, ""); err != nil {
				return err
			}
		}
		return nil
	})
}
