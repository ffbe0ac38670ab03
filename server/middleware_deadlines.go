package server

import (
	"errors"
	"io"
	"net/http"
	"time"
)

// Timeouts are the HTTP server's limits on a connection (serve --read-header-timeout,
// --read-timeout, --write-timeout, --idle-timeout): they free the connections of clients
// that send or read too slowly, which would otherwise be held open for as long as the
// client likes.
type Timeouts struct {
	// ReadHeader bounds reading a request's headers: the slow-headers attack.
	ReadHeader time.Duration
	// Read bounds reading a whole request, body included.
	Read time.Duration
	// Write bounds writing a response, from the end of the request's headers.
	Write time.Duration
	// Idle bounds the wait for the next request on a kept-alive connection.
	Idle time.Duration
}

// DefaultTimeouts are the timeouts when none are configured.
var DefaultTimeouts = Timeouts{ReadHeader: 10 * time.Second, Read: 2 * time.Minute, Write: 2 * time.Minute, Idle: 2 * time.Minute}

// withDefaults fills the zero timeouts from DefaultTimeouts.
func (t Timeouts) withDefaults() Timeouts {
	d := DefaultTimeouts
	if t.ReadHeader > 0 {
		d.ReadHeader = t.ReadHeader
	}
	if t.Read > 0 {
		d.Read = t.Read
	}
	if t.Write > 0 {
		d.Write = t.Write
	}
	if t.Idle > 0 {
		d.Idle = t.Idle
	}
	return d
}

// longTransfer lets a route's body or response take longer than the read and write
// timeouts (backups, exports, imports, uploads, file downloads) without letting a stalled
// client hold the connection: each time bytes move, the deadline is pushed to the
// timeout from now. A client that stops reading (or sending) for a whole timeout is
// still cut off.
func (s *Server) longTransfer(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request) {
	t := s.cfg.Timeouts.withDefaults()
	rc := http.NewResponseController(w)
	// Without a deadline to move (httptest's recorder), leave the request as it is.
	if err := rc.SetWriteDeadline(time.Now().Add(t.Write)); errors.Is(err, http.ErrNotSupported) {
		return w, r
	}
	if r.Body != nil && r.Body != http.NoBody {
		rc.SetReadDeadline(time.Now().Add(t.Read))
		r.Body = &deadlineReader{ReadCloser: r.Body, rc: rc, d: t.Read}
	}
	return &deadlineWriter{ResponseWriter: w, rc: rc, d: t.Write}, r
}

// deadlineWriter pushes the write deadline forward before each write.
type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	w.rc.SetWriteDeadline(time.Now().Add(w.d))
	return w.ResponseWriter.Write(b)
}

// ReadFrom keeps io.Copy's chunks going through Write, so each moves the deadline.
func (w *deadlineWriter) ReadFrom(r io.Reader) (int64, error) {
	return io.CopyBuffer(writerOnly{w}, r, make([]byte, 32<<10))
}

func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// writerOnly hides every method but Write, so io.CopyBuffer does not call ReadFrom again.
type writerOnly struct{ io.Writer }

// deadlineReader pushes the read deadline forward before each read of the body.
type deadlineReader struct {
	io.ReadCloser
	rc *http.ResponseController
	d  time.Duration
}

func (r *deadlineReader) Read(b []byte) (int, error) {
	r.rc.SetReadDeadline(time.Now().Add(r.d))
	return r.ReadCloser.Read(b)
}
