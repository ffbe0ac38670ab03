package server_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// TestSpecEveryListWalksBothWays: a cursor is "taken from meta.next_cursor or
// meta.prev_cursor of an earlier response" (List workspaces), and next_cursor is "cursor
// for the next page", prev_cursor "for the previous page" (Pagination meta). Only the
// workspaces list was walked both ways; every documented list is, here, one record a
// page: forward to the end by next_cursor (null on the last page), back to the start by
// prev_cursor (null on the first), each record once each way, in the order of the whole
// list read in one page (conventions §4: newest first, neither skipping nor repeating);
// and a cursor of one list is refused by every other.
func TestSpecEveryListWalksBothWays(t *testing.T) {
	e := newCampaignEnv(t, time.Now().UTC())
	ids := fillEveryList(t, e.startEnv)
	cursors := map[string]string{} // a next_cursor of each list, by its path
	for _, tmpl := range documentedLists(t) {
		p := pathParam.ReplaceAllStringFunc(tmpl, func(s string) string { return ids[s] })
		whole := listIDs(t, e.Do("GET", p+"?per_page=100", e.Owner.Token, nil))
		if len(whole) < 3 {
			t.Errorf("GET %s holds %d records: fillEveryList gives it too few to walk", tmpl, len(whole))
			continue
		}
		walkBothWays(t, e.startEnv, p, whole)
		cursors[p], _ = e.Do("GET", p+"?per_page=1", e.Owner.Token, nil).Meta()["next_cursor"].(string)
	}
	checkForeignCursors(t, e.startEnv, cursors)
}

// checkForeignCursors: a cursor is taken from an earlier response of the same list; one
// from another list is 422 naming cursor (conventions §4: "a foreign cursor"), never a
// page of this list read from the other's position.
func checkForeignCursors(t *testing.T, e *startEnv, cursors map[string]string) {
	t.Helper()
	for p := range cursors {
		for other, c := range cursors {
			if other == p {
				continue
			}
			r := e.Do("GET", p+"?per_page=1&cursor="+url.QueryEscape(c), e.Owner.Token, nil)
			if r.Status != 422 || r.FieldErrors()["cursor"] == nil {
				t.Errorf("GET %s with a cursor of %s: %d %.200s, want 422 naming cursor", p, other, r.Status, r.Body)
			}
		}
	}
}

// fillEveryList gives the lists of e's workspace three records or more each and returns
// the ids their paths name.
func fillEveryList(t *testing.T, e *startEnv) map[string]string {
	t.Helper()
	tok := e.Owner.Token
	post := func(path string, body any, status int) map[string]any {
		t.Helper()
		r := e.Do("POST", path, tok, body)
		expect(t, r, status)
		return r.Data()
	}
	ids := map[string]string{"{workspace_id}": e.ws, "{agent_id}": e.agent}
	for i := range 3 {
		post("/api/v1/agents", map[string]any{"name": fmt.Sprint("walk", i)}, 201)
		post("/api/v1/agents/"+e.agent+"/publish", nil, 204)
		post("/api/v1/agents/"+e.agent+"/tests", map[string]any{"name": fmt.Sprint("t", i), "user": map[string]any{"script": []string{"Hello"}},
			"variables": map[string]any{"plan": "pro"}, "criteria": []any{map[string]any{"type": "says", "pattern": "Hello"}}}, 201)
		post("/api/v1/api-keys", map[string]any{"name": fmt.Sprint("k", i)}, 201)
		expect(t, e.start(inbound(fmt.Sprintf("+1415555030%d", i), nil)), 201)
		post("/api/v1/knowledge-bases", map[string]any{"name": fmt.Sprint("kb", i)}, 201)
		post("/api/v1/numbers", map[string]any{"phone_number": fmt.Sprintf("+1415555040%d", i), "provider": "sip"}, 201)
		post("/api/v1/suppressions", map[string]any{"phone_number": fmt.Sprintf("+1415555050%d", i)}, 201)
		post("/api/v1/workspaces", map[string]any{"name": fmt.Sprint("w", i)}, 201)
		e.Member(fmt.Sprintf("m%d@example.com", i), e.ws, "member", nil, nil)
		ids["{campaign_id}"] = post("/api/v1/campaigns", map[string]any{"name": "Walk", "agent_id": e.agent, "number_id": e.number,
			"window": everyDay, "max_concurrent": 1, "recipients": []any{map[string]any{"phone_number": "+14155550601"},
				map[string]any{"phone_number": "+14155550602"}, map[string]any{"phone_number": "+14155550603"}}}, 201)["id"].(string)
	}
	// Three conversations, stored as a start stores them (the server here has no model
	// client, which a start needs).
	gen, at := data.NewIDGen(), data.NewTime(time.Now())
	if err := e.Store.Update(context.Background(), func(tx service.Tx) error {
		for range 3 {
			c := &data.StoredConversation{Conversation: data.Conversation{ID: gen.New(data.PrefixConversation), WorkspaceID: e.ws,
				AgentID: e.agent, Status: data.ConversationActive, CreatedAt: at, UpdatedAt: at}, StartedBy: e.Owner.ID}
			if err := tx.InsertConversation(c, nil); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for range 3 { // runs are listed once queued, whatever their model then answers
		post("/api/v1/agents/"+e.agent+"/test-runs", map[string]any{}, 202)
	}
	// Three test events delivered to a receiver: the webhooks list and one's deliveries.
	startDispatcher(t, &env{t: t, DB: e.Store, Logs: e.Logs})
	hook := newReceiver(t, nil).srv.URL
	for range 3 {
		ids["{webhook_id}"] = post("/api/v1/webhooks", map[string]any{"url": hook, "events": []string{"webhook.test"}}, 201)["id"].(string)
	}
	for range 3 {
		post("/api/v1/webhooks/"+ids["{webhook_id}"]+"/test", nil, 202)
	}
	deliveries := "/api/v1/webhooks/" + ids["{webhook_id}"] + "/deliveries?per_page=100"
	waitFor(t, 30*time.Second, "three deliveries", func() bool { return len(e.Do("GET", deliveries, tok, nil).List()) >= 3 })
	return ids
}

// walkBothWays walks p one record a page forward, then back from the last page, and
// checks both walks against whole, the list read in one page.
func walkBothWays(t *testing.T, e *startEnv, p string, whole []string) {
	t.Helper()
	page := func(cursor string) ([]string, map[string]any) {
		r := e.Do("GET", p+"?per_page=1&cursor="+url.QueryEscape(cursor), e.Owner.Token, nil)
		return listIDs(t, r), r.Meta()
	}
	var forward []string
	got, meta := page("")
	if meta["prev_cursor"] != nil {
		t.Errorf("GET %s: the first page has a prev_cursor", p)
	}
	for {
		forward = append(forward, got...)
		next, _ := meta["next_cursor"].(string)
		if next == "" || len(forward) > len(whole) {
			break
		}
		got, meta = page(next)
	}
	backward := slices.Clone(got)
	for len(backward) <= len(whole) {
		prev, _ := meta["prev_cursor"].(string)
		if prev == "" {
			break
		}
		got, meta = page(prev)
		backward = append(got, backward...)
	}
	if !slices.Equal(forward, whole) || !slices.Equal(backward, whole) {
		t.Errorf("GET %s walked one a page:\nforward  %s\nbackward %s\nwhole    %s", p,
			strings.Join(forward, " "), strings.Join(backward, " "), strings.Join(whole, " "))
	}
}
