package postgres

// A placeholder until the events tables are written, beside stub_events.go: EventsAfter's
// contract is in service/store_eventstream.go, its cases in service/storetest
// (events_stream.go). This file goes when they come.

import "github.com/voiceapi/voiceapi/data"

func (t *tx) EventsAfter(workspaceID, afterID string, fn func(e *data.Event) (bool, error)) error {
	panic("postgres: not written yet")
}
