package server_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/server"
)

// heldReads is the audit service with a hold on the event stream's reads: once armed,
// the first read that passes over an event waits, its result in hand, until released,
// as a long read of the log does on a loaded machine. It counts the reads begun.
type heldReads struct {
	data.AuditService
	mu      sync.Mutex
	reads   int
	hold    chan struct{} // the armed hold's release, nil when none is armed
	holding chan struct{} // closed when a read is held
}

// arm makes the next read that moves past an event wait; it returns a channel closed
// once a read is held, and the function that releases it.
func (h *heldReads) arm() (holding <-chan struct{}, release func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hold := make(chan struct{})
	h.hold, h.holding = hold, make(chan struct{})
	return h.holding, sync.OnceFunc(func() { close(hold) })
}

// begun returns how many reads the streams have begun.
func (h *heldReads) begun() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.reads
}

func (h *heldReads) StreamEvents(ctx context.Context, after string, types []string, limit int) ([]*data.Event, string, error) {
	h.mu.Lock()
	h.reads++
	h.mu.Unlock()
	list, next, err := h.AuditService.StreamEvents(ctx, after, types, limit)
	h.mu.Lock()
	hold, holding := h.hold, h.holding
	if err != nil || next == after {
		hold = nil
	}
	if hold != nil {
		h.hold = nil
	}
	h.mu.Unlock()
	if hold != nil {
		close(holding)
		<-hold
	}
	return list, next, err
}

// TestEventStreamShutdownDuringRead: a stream that is reading the log when shutdown
// begins, and whose read outlasts the close grace (a second), reads no more once it
// returns and still ends with a clean end of the response: the grace bounds a write
// blocked on the client, not the stream's own last read. Without the check before each
// read the stream reads again at once (its read passed over an event of a type it did
// not ask for); without the grace counted from the stream's end its response is cut
// (unexpected EOF).
func TestEventStreamShutdownDuringRead(t *testing.T) {
	reads := &heldReads{}
	e := newStreamEnvOn(t, func(c *server.Config) {
		c.Stream = server.StreamConfig{Poll: time.Hour, Heartbeat: time.Hour} // no read but the one held
	}, func(s *server.Services) {
		reads.AuditService = s.Audit
		s.Audit = reads
	})
	s := e.openStream(e.Owner.Token, "types="+data.EventCallStarted)
	holding, release := reads.arm()
	t.Cleanup(release)
	e.appendEvent(e.Owner.WorkspaceID, data.EventCallEnded, []byte(`{}`))
	select {
	case <-holding:
	case <-time.After(30 * time.Second):
		t.Fatal("the stream did not read the new event within 30s")
	}
	e.srv.CloseStreams() // what graceful stop does first
	// The read outlasts the grace: a sleep is a lower bound, so a slow machine only
	// lengthens it.
	time.Sleep(2 * time.Second)
	before := reads.begun()
	release()
	if err := s.waitEnd(30 * time.Second); err.Error() != "EOF" {
		t.Errorf("the stream ended with %v, want a clean end of the response", err)
	}
	if n := reads.begun() - before; n != 0 {
		t.Errorf("the stream read the log %d more times after shutdown began", n)
	}
	if err := e.stop(); err != nil {
		t.Fatalf("graceful stop: %v", err)
	}
}
