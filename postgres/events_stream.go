package postgres

import "github.com/voiceapi/voiceapi/data"

// EventsAfter implements service.EventStreamTx: a forward walk in seq order, which is
// commit order within a workspace because its appends hold the head row's lock while
// they insert.
func (t *tx) EventsAfter(workspaceID, afterID string, fn func(e *data.Event) (bool, error)) error {
	var from int64
	if afterID != "" {
		err := t.queryRow(eventsAfterSeqSQL, workspaceID, afterID).Scan(&from)
		if err != nil {
			return noRows(err) // an event not indexed under the workspace: nothing follows it
		}
	}
	w := eventWalk{t: t, workspaceID: workspaceID, forward: true, from: from}
	for {
		e, ok, err := w.next()
		if err != nil || !ok {
			return err
		}
		if more, err := fn(e); err != nil || !more {
			return err
		}
	}
}

// eventsAfterSeqSQL reads the seq of the event a catch-up resumes after, by its id.
const eventsAfterSeqSQL = `SELECT seq FROM events WHERE workspace_id = $1 AND id = $2`
