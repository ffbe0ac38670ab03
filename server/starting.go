package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"
	"github.com/voiceapi/voiceapi/console"
	"github.com/voiceapi/voiceapi/data"
)

// startingMessage answers every request but /healthz while the store opens.
const startingMessage = "The server is starting: it is opening its database (waiting for the file's lock, or migrating the schema). Retry the request in a few seconds."

// routeTable is a server without services, built on a starting server's first request:
// its router, the running server's, says which methods a path takes.
var routeTable = sync.OnceValue(func() *Server {
	return New(Services{}, Config{Logger: slog.New(slog.DiscardHandler)})
})

// Front is the HTTP server of a listener bound before the store opens. Until Switch hands
// it the real handler it answers as a starting server: /healthz 200 (the process is up),
// a method a path does not take 405 as the running server, a console page an HTML page
// saying the server is starting, everything else 503 service_unavailable with
// Retry-After, so a client or a load balancer neither hangs on an accepted connection nor
// sends traffic before the store is ready.
type Front struct {
	hs *http.Server
	// handler is nil until Switch: one atomic load per request, so the switch cannot
	// race with a request, and one on a kept-alive connection meets the real handler.
	handler atomic.Pointer[http.Handler]
	// done closes when Serve has returned, with serveErr its error.
	done     chan struct{}
	serveErr error
}

// StartServing serves ln at once with the given timeouts, answering as a starting server.
func StartServing(ln net.Listener, t Timeouts, logger *slog.Logger) *Front {
	t = t.withDefaults()
	f := &Front{done: make(chan struct{})}
	f.hs = &http.Server{
		Handler:           http.HandlerFunc(f.serveHTTP),
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	go func() { f.serveErr = f.hs.Serve(ln); close(f.done) }()
	return f
}

// Switch makes h answer every request from now on.
func (f *Front) Switch(h http.Handler) { f.handler.Store(&h) }

func (f *Front) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if h := f.handler.Load(); h != nil {
		(*h).ServeHTTP(w, r)
		return
	}
	id := r.Header.Get("X-Request-Id")
	if !validRequestID(id) {
		id = newRequestID()
	}
	w.Header().Set("X-Request-Id", id)
	if r.URL.Path == "/healthz" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		return
	}
	// A method the path's routes do not take is refused as the running server refuses it
	// (405 with Allow): waiting for the store would not make it right.
	var m mux.RouteMatch
	if routeTable().router.Match(r, &m) && errors.Is(m.MatchErr, mux.ErrMethodMismatch) {
		m.Handler.ServeHTTP(w, r)
		return
	}
	// A browser opening the console gets a page saying why it waits, which reloads itself.
	if console.Owns(r.URL.Path) {
		routeTable().console.Starting(w, r, unavailableRetryAfter)
		return
	}
	w.Header().Set("Retry-After", unavailableRetryAfter)
	writeJSON(w, http.StatusServiceUnavailable, errorBody{Message: startingMessage, Code: data.EUNAVAILABLE})
}

// Run serves until ctx is done or serving fails, then drains in-flight requests for up to
// drain before returning.
func (f *Front) Run(ctx context.Context, drain time.Duration) error {
	select {
	case <-f.done:
		return f.serveErr
	case <-ctx.Done():
	}
	return f.Stop(drain)
}

// Stop stops serving: new connections are refused, in-flight requests get up to drain to
// finish. A start that fails to open the store calls it; calling it again is harmless.
func (f *Front) Stop(drain time.Duration) error {
	shutCtx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	err := f.hs.Shutdown(shutCtx)
	<-f.done
	if f.serveErr != nil && !errors.Is(f.serveErr, http.ErrServerClosed) {
		return f.serveErr
	}
	return err
}
