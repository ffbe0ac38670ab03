package server_test

import "testing"

// TestSpecWorkspaceScopedDeletesFollowTheToken: "Workspace-scoped operations (delete
// number, delete webhook) act only on records belonging to the authenticated user's
// current workspace" (General conventions 5). The current workspace is the token's
// (conventions §5), not every workspace the user belongs to: an owner of two workspaces
// whose token is bound to one cannot delete, or see, the other's number or webhook
// through it (404, existence not revealed), and the records stay.
func TestSpecWorkspaceScopedDeletesFollowTheToken(t *testing.T) {
	e := newEnv(t)
	r := e.do("POST", "/api/v1/workspaces", e.Owner.Token, map[string]any{"name": "second"})
	expect(t, r, 201)
	second := e.tokenIn(e.Owner, r.Data()["id"].(string))

	r = e.do("POST", "/api/v1/numbers", second, map[string]any{"phone_number": "+33140000009", "provider": "twilio"})
	expect(t, r, 201)
	number := "/api/v1/numbers/" + r.Data()["id"].(string)
	r = e.do("POST", "/api/v1/webhooks", second, map[string]any{"url": "https://example.com/hook", "events": []string{"*"}})
	expect(t, r, 201)
	webhook := "/api/v1/webhooks/" + r.Data()["id"].(string)

	for _, p := range []string{number, webhook} {
		for _, method := range []string{"DELETE", "GET"} {
			r := e.do(method, p, e.Owner.Token, nil)
			expect(t, r, 404)
			if r.Code() != "not_found" {
				t.Errorf("%s %s through the personal workspace's token: code %q", method, p, r.Code())
			}
		}
		expect(t, e.do("GET", p, second, nil), 200)
	}
	expect(t, e.do("DELETE", number, second, nil), 204)
	expect(t, e.do("DELETE", webhook, second, nil), 204)
}
