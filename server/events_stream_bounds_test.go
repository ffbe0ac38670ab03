package server_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/server"
)

// bigPayload is an event's data of about n bytes.
func bigPayload(n int) []byte {
	return []byte(`{"pad":"` + strings.Repeat("x", n) + `"}`)
}

// openNeverReading opens a stream on a raw connection and reads its status line and
// headers, then nothing more.
func openNeverReading(t *testing.T, e *streamEnv, token string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET /api/v1/events/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", token)
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 16), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("opening a stream: %v %v", resp, err)
	}
	return conn
}

// liveHeap is the heap in use after two collections: the first moves sync.Pool's cached
// buffers (storage's inflate buffers reach an event's size) to the pools' victim caches,
// the second frees them, so that what is counted is what the streams hold.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestEventStreamNeverReadingClientIsBounded: streams whose clients never read hold at
// most one bounded read of the log each while their writes block, and are dropped after
// the write timeout, freeing their places; what they missed stays in the log for a
// resumed stream. 5 streams × 80 MiB of events pass by, where buffering the events per
// stream would take 400 MiB. A blocked stream holds its current read (here one 1 MiB
// event) in several forms at once: inflated from storage (in a buffer grown by
// doubling), decoded, in its envelope, framed as SSE, in the connection's buffer; the
// growth measured 39-64 MiB for the five whether 20, 40 or 80 events went by (it does
// not grow with them), so the bound is 96 MiB: a quarter of what buffering would take.
func TestEventStreamNeverReadingClientIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 40 MiB of events")
	}
	e := newStreamEnv(t, func(c *server.Config) {
		c.Timeouts = server.Timeouts{Write: 500 * time.Millisecond}
	})
	ws := e.Owner.WorkspaceID
	before := e.appendEvent(ws, data.EventCallStarted, []byte(`{}`))
	for range server.MaxStreamsPerToken {
		openNeverReading(t, e, e.Owner.Token)
	}
	base := liveHeap()
	peak := base
	const events, size = 80, 1 << 20
	for range events {
		e.appendEvent(ws, data.EventCallEnded, bigPayload(size))
		peak = max(peak, liveHeap())
	}
	// Every never-reading stream is dropped: the token's places free up.
	deadline := time.Now().Add(30 * time.Second)
	for {
		peak = max(peak, liveHeap())
		c, r := e.tryStream(e.Owner.Token, "")
		if c != nil {
			c.kill()
			break
		}
		if r.Status != 429 || time.Now().After(deadline) {
			t.Fatalf("the never-reading streams still hold the token's places: %d %s", r.Status, r.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	const bound = 96 << 20
	if grew := int64(peak) - int64(base); grew > bound {
		t.Errorf("live heap grew by %d MiB while %d MiB of events went by %d never-reading streams; bound %d MiB",
			grew>>20, events*size>>20, server.MaxStreamsPerToken, bound>>20)
	} else {
		t.Logf("live heap grew by at most %.1f MiB (%d MiB of events, %d never-reading streams)", float64(grew)/(1<<20), events*size>>20, server.MaxStreamsPerToken)
	}
	// The stream is resumable: a reader from before the burst gets all of it. The places
	// free up one at a time (each never-reading stream at its own write timeout, the probe
	// above once the server sees it closed), so the reader waits for one.
	var r *sseClient
	for deadline := time.Now().Add(30 * time.Second); r == nil; time.Sleep(50 * time.Millisecond) {
		var resp *response
		if r, resp = e.tryStream(e.Owner.Token, "", "Last-Event-ID", before); r == nil && (resp.Status != 429 || time.Now().After(deadline)) {
			t.Fatalf("opening the resumed stream: %d %s", resp.Status, resp.Body)
		}
	}
	for i := range events {
		if m := r.next(); m.event != data.EventCallEnded || len(m.data) < size {
			t.Fatalf("resumed event %d: %s of %d bytes", i, m.event, len(m.data))
		}
	}
}

// TestEventStreamShutdown: graceful stop (SIGTERM) ends every stream, an idle one with a
// clean end of the response and one blocked on a client that reads nothing within a
// second, so the drain completes (Shutdown returns nil, not its deadline) even though the
// write timeout is minutes; new streams are refused meanwhile.
func TestEventStreamShutdown(t *testing.T) {
	e := newStreamEnv(t, nil) // the default write timeout: 2 minutes
	idle := e.openStream(e.Owner.Token, "")
	openNeverReading(t, e, e.Owner.Token)
	for range 24 { // more than the kernel's socket buffers hold: the writer blocks
		e.appendEvent(e.Owner.WorkspaceID, data.EventCallEnded, bigPayload(1<<20))
	}
	for range 24 {
		idle.next() // the reading stream keeps up
	}
	start := time.Now()
	if err := e.stop(); err != nil {
		t.Fatalf("graceful stop: %v (the streams held the drain)", err)
	}
	// A hang guard, not a latency target: held by the blocked write, the stop would take
	// the write timeout (2 minutes); it takes about the grace, a few seconds on a loaded
	// machine.
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("graceful stop took %s", took)
	}
	if err := idle.waitEnd(30 * time.Second); err.Error() != "EOF" {
		t.Errorf("the idle stream ended with %v, want a clean end of the response", err)
	}
}
