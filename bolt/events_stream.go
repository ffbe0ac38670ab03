package bolt

import (
	"bytes"

	"github.com/voiceapi/voiceapi/data"
)

// EventsAfter implements service.EventStreamTx: a seek to afterID in the workspace's
// event index, then forward. Ids grow with each append and appends run under bbolt's one
// writer, so the index order is the commit order.
func (t tx) EventsAfter(workspaceID, afterID string, fn func(*data.Event) (bool, error)) error {
	prefix := indexKey(workspaceID, "")
	c := t.b.Bucket(bucketEventsByWS).Cursor()
	k, _ := c.Seek(prefix)
	if afterID != "" {
		from := indexKey(workspaceID, afterID)
		if k, _ = c.Seek(from); !bytes.Equal(k, from) {
			return nil // afterID is not indexed under the workspace
		}
		k, _ = c.Next()
	}
	for ; k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		e, err := t.Event(string(k[len(prefix):]))
		if err != nil {
			return err
		}
		if e == nil {
			continue
		}
		if more, err := fn(e); err != nil || !more {
			return err
		}
	}
	return nil
}
