package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// ownerOf is a context acting as the server's owner in its personal workspace (the
// side of the test that changes a member's access).
func ownerOf(s *testkit.Server) context.Context {
	ws := s.Owner.WorkspaceID
	return data.WithPrincipal(context.Background(), &data.Principal{UserID: s.Owner.ID, WorkspaceID: ws, CurrentWorkspaceID: ws, Role: data.RoleOwner, Modules: data.Modules})
}

// keyID is the API key id of token "<id>|<secret>".
func keyID(t *testing.T, token string) int64 {
	t.Helper()
	id, err := strconv.ParseInt(strings.SplitN(token, "|", 2)[0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// A conversation's message waits on the model for seconds between its authorization and
// its write: access revoked or narrowed while the model answers refuses the turn with the
// error shape (401 for the revoked key, 403 for the lowered role), stores nothing of it,
// and frees the conversation for the next message.
func TestLongRequestRechecksAccessInItsWrite(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(t *testing.T, e *convEnv, dev *testkit.Account)
		status int
		code   string
	}{
		{"key revoked", func(t *testing.T, e *convEnv, dev *testkit.Account) {
			if err := e.Svc.Auth.RevokeWorkspaceAPIKey(ownerOf(e.Server), e.Owner.WorkspaceID, keyID(t, dev.Token)); err != nil {
				t.Error(err)
			}
		}, 401, "unauthenticated"},
		{"role lowered", func(t *testing.T, e *convEnv, dev *testkit.Account) {
			in := data.WorkspaceUserUpdate{Role: data.Some(data.RoleMember)}
			if _, err := e.Svc.WorkspaceUsers.UpdateWorkspaceUser(ownerOf(e.Server), e.Owner.WorkspaceID, dev.ID, in); err != nil {
				t.Error(err)
			}
		}, 403, "forbidden"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newConvEnv(t, nil)
			dev := e.Member("dev@example.com", e.Owner.WorkspaceID, data.RoleDeveloper, nil, nil)
			var armed atomic.Bool
			e.stand.Respond(func(llmtest.Request) llmtest.Reply {
				if armed.CompareAndSwap(true, false) {
					c.change(t, e, dev) // commits while the request waits on the answer
				}
				return llmtest.Text("How can I help?")
			})
			agent := e.createAgent(t, map[string]any{"name": "Shop", "prompt_config": map[string]any{"prompt": "You help.", "welcome_message": "Hi!"}})
			id := e.start(t, agent, map[string]any{"version": "draft"}, 201).Data()["id"].(string)
			conv := func() []any {
				r := e.Do("GET", "/api/v1/conversations/"+id, e.tok, nil)
				testkit.Expect(t, r, 200)
				return r.Data()["messages"].([]any)
			}
			before := conv()
			armed.Store(true)
			r := e.Do("POST", "/api/v1/conversations/"+id+"/messages", dev.Token, map[string]any{"content": "hello?"})
			testkit.Expect(t, r, c.status)
			if r.Code() != c.code || !strings.Contains(r.JSON()["message"].(string), "nothing was changed") {
				t.Errorf("refusal = %s", r.Body)
			}
			if c.status == 401 && !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("WWW-Authenticate = %q", r.Header.Get("WWW-Authenticate"))
			}
			if armed.Load() {
				t.Fatal("the model was not asked: the change did not happen during the request")
			}
			if after := conv(); len(after) != len(before) {
				t.Errorf("messages: %d before, %d after the refused turn; want none stored", len(before), len(after))
			}
			// The refused turn freed its lease: the owner's message is answered at once.
			testkit.Expect(t, e.Do("POST", "/api/v1/conversations/"+id+"/messages", e.tok, map[string]any{"content": "hello?"}), 200)
		})
	}
}

// A route acting in another workspace than its token's (a {workspace_id} path) re-checks
// the membership of THAT workspace: an admin demoted there after the request was
// authorized (the server asks for the body, 100 Continue, only once it is) cannot update
// the workspace, which is left unchanged.
func TestRouteInAnotherWorkspaceRechecksThatMembership(t *testing.T) {
	s := testkit.NewServer(t, nil)
	ws := s.Owner.WorkspaceID
	ada := s.NewUser("ada@example.com", false) // her token is bound to her own workspace
	if _, err := s.Svc.WorkspaceUsers.AddWorkspaceUser(ownerOf(s), ws, data.WorkspaceUserAdd{ID: ada.ID, Role: data.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	r := sendAfterContinue(t, s.URL, "PUT", "/api/v1/workspaces/"+ws, ada.Token, map[string]any{"name": "Taken over"}, func() {
		in := data.WorkspaceUserUpdate{Role: data.Some(data.RoleDeveloper)}
		if _, err := s.Svc.WorkspaceUsers.UpdateWorkspaceUser(ownerOf(s), ws, ada.ID, in); err != nil {
			t.Error(err)
		}
	})
	testkit.Expect(t, r, 403)
	if r.Code() != "forbidden" {
		t.Errorf("refusal = %s", r.Body)
	}
	got := s.Do("GET", "/api/v1/workspaces/"+ws, s.Owner.Token, nil)
	testkit.Expect(t, got, 200)
	if name := got.Data()["name"]; name == "Taken over" {
		t.Errorf("workspace renamed by a demoted admin")
	}
}

// sendAfterContinue sends a request with Expect: 100-continue over a raw connection and
// runs between once the server asks for the body, which it does when the handler first
// reads it: after authentication and authorization.
func sendAfterContinue(t *testing.T, base, method, path, token string, body any, between func()) *testkit.Response {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	raw, _ := json.Marshal(body)
	fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", method, path, u.Host, token, len(raw))
	br := bufio.NewReader(conn)
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, " 100 ") {
		t.Fatalf("waiting for 100 Continue: %q, %v", line, err)
	}
	if _, err := br.ReadString('\n'); err != nil { // the blank line ending it
		t.Fatal(err)
	}
	between()
	if _, err := conn.Write(raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return &testkit.Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}
