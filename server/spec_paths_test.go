package server_test

import (
	"fmt"
	"testing"
)

// TestSpecPathNumbersHaveOneSpelling: "a version is addressed by its version_number"
// (Versioning 3) and API keys "have integer ids" (General conventions 3); a path id of
// the wrong shape is simply not found (conventions §3). So version 1 is /versions/1 and
// no other spelling: "01", "+1" or "1 " name no version, and restoring through one of
// them changes nothing. The same holds for an API key's id on the routes that revoke one.
func TestSpecPathNumbersHaveOneSpelling(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	id := e.createAgent(tok, map[string]any{"name": "Spelled"})["id"].(string)
	e.publish(tok, id, nil)
	expect(t, e.do("PUT", "/api/v1/agents/"+id, tok, map[string]any{"name": "Draft"}), 200)
	_, etag := e.agent(tok, id)

	base := "/api/v1/agents/" + id + "/versions/"
	expect(t, e.do("GET", base+"1", tok, nil), 200)
	for _, n := range []string{"01", "+1", "%2B1", "1%20", "0x1", "1e0", "00"} {
		expect(t, e.do("GET", base+n, tok, nil), 404)
		expect(t, e.do("GET", base+n+"/diff/current", tok, nil), 404)
		expect(t, e.do("GET", base+"1/diff/"+n, tok, nil), 404)
		expect(t, e.do("POST", base+n+"/restore", tok, nil), 404)
	}
	if _, now := e.agent(tok, id); now != etag {
		t.Fatal("a restore through a misspelt version number changed the agent")
	}

	r := e.do("POST", "/api/v1/api-keys", tok, map[string]any{"name": "spelled"})
	expect(t, r, 201)
	key, keyTok := int(r.Data()["id"].(float64)), r.JSON()["token"].(string)
	for _, spelling := range []string{"0%d", "+%d", "%%2B%d"} {
		p := fmt.Sprintf(spelling, key)
		expect(t, e.do("DELETE", "/api/v1/api-keys/"+p, tok, nil), 404)
		expect(t, e.do("DELETE", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/api-keys/"+p, tok, nil), 404)
	}
	expect(t, e.do("GET", "/api/v1/user", keyTok, nil), 200)
	expect(t, e.do("DELETE", fmt.Sprintf("/api/v1/api-keys/%d", key), tok, nil), 204)
}
