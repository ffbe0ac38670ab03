package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/server"
)

// eventStream is the tour's stream: resumed from the workspace's oldest event, it
// returns what followed, as the audit log has it.
func (tr *tour) eventStream() {
	c, ctx := tr.c, tr.ctx
	log, err := client.Collect(c.Audit.All(ctx, data.AuditFilter{}))
	tr.check("audit log", err)
	if len(log) < 2 {
		tr.t.Fatalf("the audit log holds %d events, want a few", len(log))
	}
	oldest := log[len(log)-1]
	st, err := c.Audit.Stream(ctx, client.StreamOptions{LastEventID: oldest.ID})
	tr.check("event stream", err)
	defer st.Close()
	e, err := st.Next()
	tr.check("event stream next", err)
	if want := log[len(log)-2]; e.ID != want.ID || e.Type != want.Type || string(e.Data) != string(want.Data) || st.LastEventID() != want.ID {
		tr.t.Errorf("streamed %s %s, want the event after the oldest: %s %s", e.ID, e.Type, want.ID, want.Type)
	}
}

// cuttingTransport cuts the body of the first cuts responses after limit bytes, as a
// connection that breaks mid-message.
type cuttingTransport struct {
	cuts  atomic.Int32
	hits  atomic.Int32 // bodies actually cut
	limit int64
}

func (c *cuttingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && resp.StatusCode == 200 && c.cuts.Add(-1) >= 0 {
		resp.Body = &cutBody{ReadCloser: resp.Body, left: c.limit, hits: &c.hits}
	}
	return resp, err
}

type cutBody struct {
	io.ReadCloser
	left int64
	hits *atomic.Int32
}

func (b *cutBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		b.hits.Add(1)
		b.ReadCloser.Close()
		return 0, errors.New("connection reset (test)")
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// TestFollowResumesAfterBrokenConnections: Follow reconnects with Last-Event-ID each
// time its connection breaks mid-message, and yields every event once, in order.
func TestFollowResumesAfterBrokenConnections(t *testing.T) {
	s := newServer(t, nil, func(c *server.Config) { c.Stream.Poll = 20 * time.Millisecond })
	ct := &cuttingTransport{limit: 3000} // an agent.created message is over 1 KiB: each connection delivers one or two
	ct.cuts.Store(5)
	c := s.client(t, client.WithHTTPClient(&http.Client{Transport: ct}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start, err := client.Collect(c.Audit.All(ctx, data.AuditFilter{}))
	if err != nil || len(start) == 0 {
		t.Fatalf("audit log: %v, %v", start, err)
	}
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		if _, _, err := c.Agents.Create(ctx, client.AgentInput{Name: &name}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for e, err := range c.Audit.Follow(ctx, client.StreamOptions{LastEventID: start[0].ID, Types: []string{data.EventAgentCreated}}) {
		if err != nil {
			t.Fatalf("follow: %v", err)
		}
		got = append(got, e.ID)
		if len(got) == 8 {
			break
		}
	}
	if n := ct.hits.Load(); n < 3 {
		t.Fatalf("the connection was cut %d times: the test proves nothing", n)
	}
	var want []string
	for e, err := range c.Audit.All(ctx, data.AuditFilter{Type: data.EventAgentCreated}) {
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, e.ID)
	}
	slices.Reverse(want)
	if !slices.Equal(got, want) {
		t.Errorf("followed %v, want %v (each once, in order)", got, want)
	}
}

// TestStreamRefusals: a refusal is an *Error; Follow yields one that a retry cannot cure
// and stops.
func TestStreamRefusals(t *testing.T) {
	s := newServer(t, nil)
	c := s.client(t)
	ctx := context.Background()
	_, err := c.Audit.Stream(ctx, client.StreamOptions{Types: []string{"agent.exploded"}})
	if e := mustErr(t, err, http.StatusUnprocessableEntity); len(e.Fields["types"]) == 0 {
		t.Errorf("unknown type: %+v", e)
	}
	_, err = c.Audit.Stream(ctx, client.StreamOptions{LastEventID: "evt_nope"})
	mustErr(t, err, http.StatusUnprocessableEntity)
	n := 0
	for _, err := range c.Audit.Follow(ctx, client.StreamOptions{LastEventID: "evt_nope"}) {
		n++
		mustErr(t, err, http.StatusUnprocessableEntity)
	}
	if n != 1 {
		t.Errorf("Follow yielded %d times on a 422, want once", n)
	}

	var open []*client.EventStream
	for range server.MaxStreamsPerToken {
		st, err := c.Audit.Stream(ctx, client.StreamOptions{})
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, st)
	}
	_, err = c.Audit.Stream(ctx, client.StreamOptions{})
	if e := mustErr(t, err, http.StatusTooManyRequests); e.RetryAfter <= 0 {
		t.Errorf("over the cap: %+v, want Retry-After", e)
	}
	for _, st := range open {
		st.Close()
	}
}
