package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// Every limited resource refuses the create past its limit with 403 quota_exceeded naming
// the limit, and stores nothing more (conventions §13).
func TestQuotaPerResource(t *testing.T) {
	cases := []struct {
		limit  string
		create func(e *env, i int) *response
		list   string
	}{
		{data.LimitAgents, func(e *env, i int) *response {
			return e.do("POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": fmt.Sprintf("agent %d", i)})
		}, "/api/v1/agents"},
		{data.LimitWebhooks, func(e *env, i int) *response {
			return e.do("POST", "/api/v1/webhooks", e.Owner.Token, map[string]any{"url": fmt.Sprintf("https://example.com/%d", i), "events": []string{"*"}})
		}, "/api/v1/webhooks"},
		{data.LimitKnowledgeBases, func(e *env, i int) *response {
			return e.do("POST", "/api/v1/knowledge-bases", e.Owner.Token, map[string]any{"name": fmt.Sprintf("kb %d", i)})
		}, "/api/v1/knowledge-bases"},
		{data.LimitNumbers, func(e *env, i int) *response {
			return e.do("POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": fmt.Sprintf("+1202555%04d", i), "provider": "twilio"})
		}, "/api/v1/numbers"},
		{data.LimitWorkspaceUsers, func(e *env, i int) *response {
			u := e.newUser(fmt.Sprintf("member%d@example.com", i), false)
			return e.do("POST", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/users", e.Owner.Token, map[string]any{"id": u.ID, "role": "member"})
		}, "/api/v1/workspaces/{ws}/users"},
	}
	for _, c := range cases {
		t.Run(c.limit, func(t *testing.T) {
			e := newEnv(t)
			const limit = 3
			if _, err := e.setSubscription(context.Background(), e.Owner.WorkspaceID, data.SubscriptionSet{Limits: map[string]int64{c.limit: limit}}); err != nil {
				t.Fatal(err)
			}
			list := strings.ReplaceAll(c.list, "{ws}", e.Owner.WorkspaceID)
			before := len(listIDs(t, e.do("GET", list+"?per_page=100", e.Owner.Token, nil)))
			for i := before; i < limit; i++ {
				expect(t, c.create(e, i), 201)
			}
			r := c.create(e, limit)
			expect(t, r, 403)
			if r.Code() != data.EQUOTA || !strings.Contains(r.JSON()["message"].(string), c.limit) {
				t.Fatalf("want quota_exceeded naming %s: %s", c.limit, r.Body)
			}
			if n := len(listIDs(t, e.do("GET", list+"?per_page=100", e.Owner.Token, nil))); n != limit {
				t.Fatalf("%d records stored, want %d", n, limit)
			}
		})
	}
}
