package server_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/server"
	"github.com/voiceapi/voiceapi/service"
)

// streamEnv is a server on a real loopback listener, so that its timeouts and graceful
// stop apply, woken by the database's event hook as serve wires it.
type streamEnv struct {
	*testkit.Env
	t     *testing.T
	URL   string
	Owner *testkit.Account
	srv   *server.Server
	// stop begins the graceful stop (SIGTERM) and returns ListenAndServe's result.
	stop func() error
}

func newStreamEnv(t *testing.T, configure func(*server.Config)) *streamEnv {
	t.Helper()
	return newStreamEnvOn(t, configure, nil)
}

// newStreamEnvOn is newStreamEnv with the server's services adjusted by wrap (nil for
// none), for a test that must hold a service call at a chosen moment.
func newStreamEnvOn(t *testing.T, configure func(*server.Config), wrap func(*server.Services)) *streamEnv {
	t.Helper()
	env := testkit.New(t, nil)
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	var srv *server.Server
	if wrap == nil {
		srv = cli.NewServer(env.Store, logger, func(c *server.Config) {
			if configure != nil {
				configure(c)
			}
		})
	} else {
		cfg := server.Config{Logger: logger}
		if configure != nil {
			configure(&cfg)
		}
		svcs := cli.Services(env.Store)
		wrap(&svcs)
		srv = server.New(svcs, cfg)
	}
	env.Store.SetEventHook(srv.WakeStreams)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	// The drain's deadline is generous (it costs time only when a stream holds the drain)
	// and still well under the default write timeout (2 minutes) that a blocked stream
	// would hold it for.
	go func() { served <- srv.ListenAndServe(ctx, ln, time.Minute) }()
	var once sync.Once
	var result error
	stop := func() error {
		once.Do(func() { cancel(); result = <-served })
		return result
	}
	t.Cleanup(func() { stop(); env.Store.SetEventHook(nil) })
	return &streamEnv{Env: env, t: t, URL: "http://" + ln.Addr().String(), srv: srv, stop: stop,
		Owner: testkit.NewAccount(t, env.Svc, "owner@example.com", true)}
}

// do sends one ordinary request.
func (e *streamEnv) do(method, path, token string, body any, headers ...string) *response {
	e.t.Helper()
	return testkit.Request(e.t, e.URL, method, path, token, body, headers...)
}

// newAgent creates an agent through the API (an agent.created event) and returns its id.
func (e *streamEnv) newAgent(name string) string {
	e.t.Helper()
	r := e.do("POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": name})
	expect(e.t, r, 201)
	return r.Data()["id"].(string)
}

// sseMessage is one message of a stream, or a comment line when comment is set.
type sseMessage struct {
	id, event, data string
	comment         string
}

// sseClient reads a stream in the background: messages and comments in order, then the
// error that ended it.
type sseClient struct {
	t      *testing.T
	resp   *http.Response
	cancel context.CancelFunc
	msgs   chan sseMessage
	ended  chan error
}

// openStream opens the stream with token, query (may be "") and headers; it fails the
// test unless the answer is 200.
func (e *streamEnv) openStream(token, query string, headers ...string) *sseClient {
	e.t.Helper()
	c, resp := e.tryStream(token, query, headers...)
	if c == nil {
		e.t.Fatalf("opening the stream: %d %s", resp.Status, resp.Body)
	}
	return c
}

// tryStream opens the stream; it returns the client on 200, else the finished response.
func (e *streamEnv) tryStream(token, query string, headers ...string) (*sseClient, *response) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	u := e.URL + "/api/v1/events/stream"
	if query != "" {
		u += "?" + query
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	// Its own transport: a killed stream takes only its own connection with it.
	tr := &http.Transport{DisableKeepAlives: true}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		cancel()
		e.t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		defer cancel()
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return nil, &response{Status: resp.StatusCode, Header: resp.Header, Body: body}
	}
	c := &sseClient{t: e.t, resp: resp, cancel: cancel, msgs: make(chan sseMessage, 10000), ended: make(chan error, 1)}
	go c.read()
	e.t.Cleanup(c.kill)
	return c, nil
}

func (c *sseClient) read() {
	br := bufio.NewReader(c.resp.Body)
	var m sseMessage
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			c.ended <- err
			close(c.msgs)
			return
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if m.id != "" || m.data != "" {
				c.msgs <- m
			}
			m = sseMessage{}
		case strings.HasPrefix(line, ":"):
			c.msgs <- sseMessage{comment: strings.TrimSpace(line[1:])}
		default:
			k, v, _ := strings.Cut(line, ": ")
			switch k {
			case "id":
				m.id = v
			case "event":
				m.event = v
			case "data":
				m.data += v
			}
		}
	}
}

// kill drops the connection, as a client that crashes or loses its network would.
func (c *sseClient) kill() {
	c.cancel()
	c.resp.Body.Close()
}

// next returns the next event message, passing over comments; it fails the test when
// none comes within 30 seconds.
func (c *sseClient) next() sseMessage {
	c.t.Helper()
	for {
		m := c.nextAny()
		if m.comment == "" {
			return m
		}
	}
}

// nextAny returns the next message or comment.
func (c *sseClient) nextAny() sseMessage {
	c.t.Helper()
	select {
	case m, ok := <-c.msgs:
		if !ok {
			c.t.Fatalf("the stream ended: %v", <-c.ended)
		}
		return m
	case <-time.After(30 * time.Second): // a hang guard: it costs time only when broken
		c.t.Fatal("no message within 30s")
	}
	return sseMessage{}
}

// quiet fails the test if an event message arrives within d.
func (c *sseClient) quiet(d time.Duration) {
	c.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				return
			}
			if m.comment == "" {
				c.t.Fatalf("unexpected event %s %s", m.event, m.id)
			}
		case <-deadline:
			return
		}
	}
}

// waitEnd waits for the server to end the stream and returns the read's error.
func (c *sseClient) waitEnd(within time.Duration) error {
	c.t.Helper()
	timeout := time.After(within)
	for {
		select {
		case _, ok := <-c.msgs:
			if !ok {
				return <-c.ended
			}
		case <-timeout:
			c.t.Fatalf("the stream still runs after %s", within)
		}
	}
}

// auditEvents returns the workspace's events from the audit log, oldest first.
func (e *streamEnv) auditEvents(token string) []map[string]any {
	e.t.Helper()
	r := e.do("GET", "/api/v1/audit-log?per_page=100", token, nil)
	expect(e.t, r, 200)
	var out []map[string]any
	list := r.List()
	for i := len(list) - 1; i >= 0; i-- {
		out = append(out, list[i].(map[string]any))
	}
	return out
}

// appendEvent stores an event of workspace ws straight in the log, as a service does in
// its write transaction (for volumes the API would take long to make).
func (e *streamEnv) appendEvent(ws, typ string, payload []byte) string {
	e.t.Helper()
	ev := &data.Event{ID: e.Store.ServiceOptions().IDs.New(data.PrefixEvent), Type: typ, WorkspaceID: ws, Data: payload, Actor: data.Actor{Type: "system"}}
	if err := e.Store.Update(context.Background(), func(tx service.Tx) error { return tx.AppendEvent(ev) }); err != nil {
		e.t.Fatal(err)
	}
	return ev.ID
}
