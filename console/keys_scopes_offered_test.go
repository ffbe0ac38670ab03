package console_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/console/internal/testenv"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestKeyFormOffersOnlyScopesTheAPIGives: the API-keys page offers each user exactly the
// scopes the API lets them give a key (data.GivesScope): every scope offered is accepted
// (201) when the user asks for it, every other refused (403 naming it). A member without
// the agents module is offered no agents:read (the catalog aside, it grants them
// nothing), a member no write scope and no webhooks, a developer limited to one agent no
// webhooks, a developer holding analytics its write scope. Both engines.
func TestKeyFormOffersOnlyScopesTheAPIGives(t *testing.T) {
	e := testenv.Start(t)
	agent := createAgent(t, e, e.Owner.Token, "Alpha line")
	users := []struct {
		email  string
		member map[string]any
		wants  []string // offered
		nots   []string // not offered
	}{
		{"member@example.com", map[string]any{"role": "member", "modules": []string{"call_history", "phone_numbers"}},
			[]string{"call_history:read", "phone_numbers:read", "audit:read", "workspace:admin", "calls:runtime"},
			[]string{"agents:read", "conversations:write", "call_history:write", "webhooks:read", "analytics:read"}},
		{"limited@example.com", map[string]any{"role": "developer", "agent_ids": []string{agent}},
			[]string{"agents:write", "analytics:write", "knowledge_base:write"},
			[]string{"webhooks:read", "webhooks:write"}},
	}
	for _, u := range users {
		user := e.NewUser(u.email, false)
		addMember(t, e, user, u.member)
		s := e.SignIn(user, e.Owner.WorkspaceID)
		page := string(e.Do(s.Client, "GET", "/api-keys", "", nil).Body)
		tok := testkit.APIKey(t, cli.NewServices(e.DB), user.ID, e.Owner.WorkspaceID)
		for _, sc := range data.Scopes {
			offered := strings.Contains(page, `name="scopes" value="`+sc+`"`)
			if slices.Contains(u.wants, sc) && !offered || slices.Contains(u.nots, sc) && offered {
				t.Errorf("%s: %s offered %v", u.email, sc, offered)
			}
			res := e.Do(nil, "POST", "/api/v1/api-keys", tok, map[string]any{"name": "k", "scopes": []string{sc}})
			switch {
			case offered && res.Status != http.StatusCreated:
				t.Errorf("%s: %s is offered, but the API answers %d %s", u.email, sc, res.Status, res.Body)
			case !offered && (res.Status != http.StatusForbidden || !strings.Contains(string(res.Body), sc)):
				t.Errorf("%s: %s is not offered, but the API answers %d %s", u.email, sc, res.Status, res.Body)
			}
		}
	}
}
