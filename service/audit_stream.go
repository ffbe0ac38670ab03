package service

import (
	"context"
	"slices"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// MaxStreamBatch and MaxStreamBatchBytes bound the events one read of a live event
// stream returns, and so what a stream holds in memory: a stream far behind catches up
// in reads of this size, each written out before the next is made. The byte bound counts
// the events' data; a read returns at least one event whatever its size.
const (
	MaxStreamBatch      = 64
	MaxStreamBatchBytes = 256 << 10
)

// StreamStart implements data.EventStreamer.
func (s *AuditService) StreamStart(ctx context.Context, lastEventID string, types []string) (string, error) {
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return "", err
	}
	typeFaults := validate.EventStreamTypes(types)
	var pos string
	var idFaults validate.Errors
	err = s.store.View(ctx, func(tx Tx) error {
		pos = ""
		if lastEventID == "" {
			// A new stream starts after the newest event: it tells what happens next.
			return tx.EventsNewestFirst(ws, func(e *data.Event) (bool, error) {
				pos = e.ID
				return false, nil
			})
		}
		e, err := workspaceEvent(tx, ws, lastEventID)
		if err != nil {
			return err
		}
		if e == nil || !s.eventVisibility(data.PrincipalFrom(ctx)).event(e) {
			// Unknown, another workspace's and one the caller may not see look the same:
			// existence is not revealed. A stream only ever sends ids the caller sees.
			idFaults.Add("last_event_id", "Last-Event-ID (or last_event_id) names no event of this workspace: resume from an id this stream sent, or start without one.")
		}
		pos = lastEventID
		return nil
	})
	if err != nil {
		return "", err
	}
	if err := checkInput(ctx, validate.Combine(typeFaults, idFaults.Err())); err != nil {
		return "", err
	}
	return pos, nil
}

// StreamEvents implements data.EventStreamer. It returns at most min(limit,
// MaxStreamBatch) events, stopping early past MaxStreamBatchBytes, read in one read
// transaction. Events of other types, and those the caller may not see (visibility.go),
// are passed over (the position moves past them), at most MaxAuditScan events in all per
// read, so a filter that matches nothing in a long log keeps each read transaction short.
// Counting the hidden ones tells the reader nothing, unlike an audit page's bound: the
// stream reads on until its position stops moving (server/events_stream.go, catchUp) and
// sends only the events, so their number changes how many reads it makes, not what it
// sends.
func (s *AuditService) StreamEvents(ctx context.Context, after string, types []string, limit int) ([]*data.Event, string, error) {
	ws, err := currentWorkspace(ctx)
	if err != nil {
		return nil, "", err
	}
	if err := validate.EventStreamTypes(types); err != nil {
		return nil, "", err
	}
	limit = min(max(limit, 1), MaxStreamBatch)
	v := s.eventVisibility(data.PrincipalFrom(ctx))
	var out []*data.Event
	pos := after
	err = s.store.View(ctx, func(tx Tx) error {
		out, pos = nil, after
		if after != "" {
			// EventsAfter says nothing of a position it does not find; a stream whose
			// position vanished (its workspace was deleted) must end, not go quiet.
			known, err := eventOf(tx, ws, after)
			if err != nil {
				return err
			}
			if !known {
				return data.NotFound("Event")
			}
		}
		bytes, scanned := 0, 0
		return tx.EventsAfter(ws, after, func(e *data.Event) (bool, error) {
			pos, scanned = e.ID, scanned+1
			if (len(types) == 0 || slices.Contains(types, e.Type)) && v.event(e) {
				out = append(out, v.eventShown(e))
				bytes += len(e.Data)
			}
			return len(out) < limit && bytes < MaxStreamBatchBytes && scanned < MaxAuditScan, nil
		})
	})
	if err != nil {
		return nil, after, err
	}
	return out, pos, nil
}

// eventOf reports whether id names a stored event of workspace ws.
func eventOf(tx Tx, ws, id string) (bool, error) {
	e, err := workspaceEvent(tx, ws, id)
	return e != nil, err
}

// workspaceEvent returns the event id of workspace ws, nil when there is none.
func workspaceEvent(tx Tx, ws, id string) (*data.Event, error) {
	if !data.ValidID(data.PrefixEvent, id) {
		return nil, nil
	}
	e, err := tx.Event(id)
	if err != nil || e == nil || e.WorkspaceID != ws {
		return nil, err
	}
	return e, nil
}
