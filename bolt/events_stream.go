package bolt

import (
	"bytes"

	"github.com/voiceapi/voiceapi/data"
)

// EventsAfter implements service.EventStreamTx: a seek to afterID in the workspace's
// event index, then up to limit entries forward. Ids grow with each append and appends
// run under bbolt's one writer, so the index order is the commit order.
func (t tx) EventsAfter(workspaceID, afterID string, limit int) ([]*data.Event, error) {
	if limit < 1 {
		return nil, nil
	}
	prefix := indexKey(workspaceID, "")
	c := t.b.Bucket(bucketEventsByWS).Cursor()
	k, _ := c.Seek(prefix)
	if afterID != "" {
		from := indexKey(workspaceID, afterID)
		if k, _ = c.Seek(from); !bytes.Equal(k, from) {
			return nil, nil // afterID is not indexed under the workspace
		}
		k, _ = c.Next()
	}
	var out []*data.Event
	for ; k != nil && bytes.HasPrefix(k, prefix) && len(out) < limit; k, _ = c.Next() {
		e, err := t.Event(string(k[len(prefix):]))
		if err != nil {
			return nil, err
		}
		if e != nil {
			out = append(out, e)
		}
	}
	return out, nil
}
