package service

import "github.com/voiceapi/voiceapi/data"

// EventStreamTx reads a workspace's events forward from a position, for the live event
// stream: a reader that saw an event and asks for what follows it must get every event
// committed after it, once, in order.
type EventStreamTx interface {
	// EventsAfter calls fn with the workspace's events appended after the event afterID,
	// oldest first, in append order (the order ChainEvents walks), until fn returns false
	// or an error (which EventsAfter returns). afterID "" starts at the workspace's
	// oldest event. When afterID names no event indexed under the workspace (never
	// stored, another workspace's, or deleted with its workspace), fn is not called and
	// the error is nil: the caller tells these apart with Event. An index entry without
	// its event is passed over. One event at a time: the caller bounds what it keeps.
	//
	// Appends to one workspace are serialized by its chain head (EventHead is read and
	// moved in the appending transaction), so append order is commit order there: an
	// engine must keep EventsAfter's order equal to it (bolt: ids that grow with each
	// append, under one writer; an engine with concurrent writers: the head's row lock
	// and a per-workspace sequence), or a reader could pass over an event committed late
	// with an earlier position.
	EventsAfter(workspaceID, afterID string, fn func(e *data.Event) (bool, error)) error
}
