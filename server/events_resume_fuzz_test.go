package server_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// resumeFixture is a workspace with a known log: two agents' events, a security event,
// and another workspace's; the owner sees them all, a developer limited to one agent only
// that agent's.
type resumeFixture struct {
	s                *testkit.Server
	events           []map[string]any // the workspace's, oldest first
	other            string           // an event of another workspace
	owner, limited   context.Context
	ownerTok, limTok string
	visible          string // the limited developer's agent
}

func newResumeFixture(f *testing.F) *resumeFixture {
	s := testkit.NewServer(f, nil)
	ws := s.Owner.WorkspaceID
	agent := func(name string) string {
		r := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": name})
		testkit.Expect(f, r, 201)
		return r.Data()["id"].(string)
	}
	hidden, visible := agent("hidden"), agent("visible")
	lim := s.Member("limited@example.com", ws, data.RoleDeveloper, nil, []string{visible})
	for i := range 3 {
		for _, id := range []string{hidden, visible} {
			testkit.Expect(f, s.Do("PUT", "/api/v1/agents/"+id, s.Owner.Token, map[string]any{"name": fmt.Sprint("renamed ", i)}), 200)
		}
	}
	other := s.Do("POST", "/api/v1/workspaces", s.Owner.Token, map[string]any{"name": "other"})
	testkit.Expect(f, other, 201)
	fx := &resumeFixture{s: s, ownerTok: s.Owner.Token, limTok: lim.Token, visible: visible}
	log := s.Do("GET", "/api/v1/audit-log?per_page=100", s.Owner.Token, nil)
	testkit.Expect(f, log, 200)
	for _, e := range slices.Backward(log.List()) {
		fx.events = append(fx.events, e.(map[string]any))
	}
	otherTok := s.TokenIn(&testkit.Account{ID: s.Owner.ID}, other.Data()["id"].(string))
	testkit.Expect(f, s.Do("POST", "/api/v1/agents", otherTok, map[string]any{"name": "elsewhere"}), 201)
	olog := s.Do("GET", "/api/v1/audit-log?per_page=1", otherTok, nil)
	fx.other = olog.List()[0].(map[string]any)["id"].(string)
	for _, c := range []struct {
		ctx *context.Context
		tok string
	}{{&fx.owner, fx.ownerTok}, {&fx.limited, fx.limTok}} {
		p, err := s.Svc.Auth.Authenticate(context.Background(), c.tok)
		if err != nil {
			f.Fatal(err)
		}
		*c.ctx = data.WithPrincipal(context.Background(), p)
	}
	return fx
}

// sees is the oracle of what each reader may see: the owner every event of the workspace;
// the developer the events of its one agent, by the agent id in their data.
func (fx *resumeFixture) sees(limited bool, e map[string]any) bool {
	if !limited {
		return true
	}
	d, _ := e["data"].(map[string]any)
	return strings.HasPrefix(e["type"].(string), "agent.") && d["id"] == fx.visible
}

// FuzzLastEventID resumes the event stream from any Last-Event-ID ("@" in it standing
// for the id of the event pick chooses, "#" for another workspace's), as the owner or a
// developer limited to one agent, for every type or for agent.updated only. Properties
// (docs/events.md): the resume is accepted iff the id is an event of the workspace that
// reader may see; the events read from it are exactly the ones that reader may see, of
// the types asked, that come after it in the log, in order, none twice, none skipped;
// any other id (garbage, another workspace's, hidden from the reader) is the same 422
// naming last_event_id over HTTP, as the header and as the query parameter.
func FuzzLastEventID(f *testing.F) {
	fx := newResumeFixture(f)
	unknown := fx.s.Do("GET", "/api/v1/events/stream", fx.limTok, nil, "Last-Event-ID", "evt_01JD6Q3V9X8Y7Z6W5V4U3T2S1R")
	testkit.ExpectFields(f, unknown, "last_event_id")
	f.Add("@", uint8(0), false, false)
	f.Add("@", uint8(3), true, false)
	f.Add("@", uint8(5), true, true)
	f.Add(" @", uint8(1), false, false)
	f.Add("@x", uint8(2), false, true)
	f.Add("#", uint8(0), false, false)
	f.Add("evt_", uint8(0), true, false)
	f.Add("EVT_@", uint8(4), false, false)
	f.Fuzz(func(t *testing.T, template string, pick uint8, limited, onlyUpdates bool) {
		i := int(pick) % len(fx.events)
		id := strings.ReplaceAll(template, "@", fx.events[i]["id"].(string))
		id = strings.ReplaceAll(id, "#", fx.other)
		if id == "" || strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) || strings.Trim(id, " \t") != id {
			return // no id (a stream of what comes next), or none a header carries as is
		}
		ctx, tok := fx.owner, fx.ownerTok
		if limited {
			ctx, tok = fx.limited, fx.limTok
		}
		var types []string
		if onlyUpdates {
			types = []string{data.EventAgentUpdated}
		}
		at := slices.IndexFunc(fx.events, func(e map[string]any) bool { return e["id"] == id })
		accepted := at >= 0 && fx.sees(limited, fx.events[at])
		pos, err := fx.s.Svc.Audit.StreamStart(ctx, id, types)
		if accepted != (err == nil) {
			t.Fatalf("resume from %q (limited %v): error %v, want accepted %v", id, limited, err, accepted)
		}
		if err != nil {
			if data.ErrorCode(err) != data.EINVALID {
				t.Fatalf("resume from %q: %v", id, err)
			}
			for _, how := range []*response{
				testkit.Request(t, fx.s.URL, "GET", "/api/v1/events/stream", tok, nil, "Last-Event-ID", id),
				testkit.Request(t, fx.s.URL, "GET", "/api/v1/events/stream?last_event_id="+url.QueryEscape(id), tok, nil),
			} {
				testkit.ExpectFields(t, how, "last_event_id")
				if string(how.Body) != string(unknown.Body) {
					t.Fatalf("resume from %q answered %s, an unknown id %s", id, how.Body, unknown.Body)
				}
			}
			return
		}
		var want, got []string
		for _, e := range fx.events[at+1:] {
			if fx.sees(limited, e) && (types == nil || e["type"] == data.EventAgentUpdated) {
				want = append(want, e["id"].(string))
			}
		}
		for range len(fx.events) + 1 {
			batch, next, err := fx.s.Svc.Audit.StreamEvents(ctx, pos, types, 3)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range batch {
				got = append(got, e.ID)
			}
			if len(batch) == 0 && next == pos {
				break
			}
			pos = next
		}
		if !slices.Equal(got, want) {
			t.Fatalf("resumed from %q (limited %v, types %v): read %q, want %q", id, limited, types, got, want)
		}
	})
}
