package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/validate"
)

// badDelete is one refused request to a delete route: its path, headers (name, value
// pairs), body (nil for none) and the status the conventions give it.
type badDelete struct {
	name    string
	path    string
	headers []string
	body    any
	want    int
}

// TestNewDeletesRefuseBadInput: DELETE /agents/{id}/versions/{n} and DELETE
// /campaigns/{id} given a version number that names no version (0, -1, past the 1,000
// bound, past int64, not a number, not in its canonical form; the version's restore
// too), an id of the wrong shape or of another kind, a path with dot segments or doubled
// slashes, an If-Match that is not the record's ETag, a body of another media type or
// one other than {} (conventions §1, §2, §3, §17): each is the error shape with its
// status, and the whole store (storeDump) is byte for byte what it was. Then the same
// deletes, well formed, are 204. A dot-segment path was answered 301 to the cleaned
// path, so that a client following it as a DELETE deleted what "versions/.." cleans
// to, the agent; a body was ignored, so that a text/plain one deleted the version.
func TestNewDeletesRefuseBadInput(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	tok := e.Owner.Token
	agent := e.publishedAgent("Pruned")
	for range 2 {
		testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+agent, tok, map[string]any{"name": "Pruned " + time.Now().String()}), 200)
		testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+agent+"/publish", tok, nil), 204)
	}
	campaign := e.create(e.campaignBody([]string{"+14155550101", "+14155550102"}, nil))
	testkit.Expect(t, e.Do("POST", "/api/v1/campaigns/"+campaign+"/cancel", tok, nil), 200)
	versions := "/api/v1/agents/" + agent + "/versions/"
	deletable := versions + "1" // neither published (3) nor in a rollout
	campaignPath := "/api/v1/campaigns/" + campaign

	var cases []badDelete
	for _, n := range []string{"0", "-1", "4", "1000", "1001", "9223372036854775807", "9223372036854775808",
		"99999999999999999999", "abc", "1.5", "1e0", "+1", "01", "0x1", "%201", "1%20", "%00", ".", "..", "%2e%2e", "x/../1", "1/"} {
		cases = append(cases, badDelete{"version " + n, versions + n, nil, nil, 404},
			badDelete{"restore of version " + n, "POST " + versions + n + "/restore", nil, nil, 404})
	}
	for _, id := range []string{"x", "agt_", strings.Repeat("a", 300), campaign, agent + "x", "%00", "..", "x/../" + agent} {
		cases = append(cases, badDelete{"agent id " + id, "/api/v1/agents/" + id + "/versions/1", nil, nil, 404})
	}
	for _, id := range []string{"x", "cmp_", strings.Repeat("c", 300), agent, campaign + "x", "%00", ".", "..", "%2e%2e",
		"x/../" + campaign, "/" + campaign, campaign + "/", campaign + "/."} {
		cases = append(cases, badDelete{"campaign id " + id, "/api/v1/campaigns/" + id, nil, nil, 404})
	}
	for _, path := range []string{deletable, campaignPath} {
		etag := e.Do("GET", path, tok, nil).Header.Get("ETag")
		if !strings.HasPrefix(etag, `"`) {
			t.Fatalf("GET %s: ETag %q", path, etag)
		}
		cases = append(cases,
			badDelete{"the ETag weak (If-Match compares strongly)", path, []string{"If-Match", "W/" + etag}, nil, 412},
			badDelete{"the ETag unquoted", path, []string{"If-Match", strings.Trim(etag, `"`)}, nil, 412},
			badDelete{"stale If-Match", path, []string{"If-Match", `"stale"`}, nil, 412},
			badDelete{"unquoted If-Match", path, []string{"If-Match", "stale"}, nil, 412},
			badDelete{"weak If-Match", path, []string{"If-Match", `W/"stale"`}, nil, 412},
			badDelete{"text body", path, []string{"Content-Type", "text/plain"}, "delete it", 415},
			badDelete{"JSON body without its media type", path, []string{"Content-Type", "text/plain"}, `{}`, 415},
			badDelete{"a JSON member", path, nil, map[string]any{"force": true}, 400},
			badDelete{"a JSON array", path, nil, []any{}, 400},
			badDelete{"malformed JSON", path, nil, `{"force":`, 400},
		)
	}
	before := dumpStore(t, e.Store)
	for _, c := range cases {
		method, path := "DELETE", c.path
		if m, p, ok := strings.Cut(c.path, " "); ok {
			method, path = m, p // a version's other write, under the same numbers
		}
		r := e.Do(method, path, tok, c.body, c.headers...)
		if r.Status != c.want {
			t.Errorf("%s (DELETE %s): %d %s, want %d", c.name, c.path, r.Status, r.Body, c.want)
			continue
		}
		if m := r.JSON(); m["message"] == nil || m["code"] == nil || m["errors"] != nil {
			t.Errorf("%s: %s is not the error shape", c.name, r.Body)
		}
		if changed := before.diff(dumpStore(t, e.Store), 8); len(changed) > 0 {
			t.Fatalf("%s (DELETE %s, %d) changed the store: %v", c.name, c.path, r.Status, changed)
		}
	}
	for _, path := range []string{deletable, campaignPath} {
		testkit.Expect(t, e.Do("DELETE", path, tok, "{ }"), 204)
	}
}

// TestNewDeleteConflictsChangeNothing: the refusals of the new deletes and of the
// versions' bound, each a 409 conflict in the error shape, leave the whole store
// (storeDump: events, outbox, jobs included) byte for byte as it was: a running
// campaign's delete, a canceled one's with its call in progress, the published version's
// and a rollout variant's delete, and a publish at the 1,000 versions' bound.
func TestNewDeleteConflictsChangeNothing(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	tok := e.Owner.Token
	running := e.create(e.campaignBody([]string{"+14155550101"}, nil))
	calling := e.create(e.campaignBody([]string{"+14155550102"}, nil))
	if tasks := e.claim(5); len(tasks) != 2 {
		t.Fatalf("%d tasks claimed, want 2", len(tasks))
	}
	testkit.Expect(t, e.Do("POST", "/api/v1/campaigns/"+calling+"/cancel", tok, nil), 200)

	agent := e.publishedAgent("Bounded")
	versions := "/api/v1/agents/" + agent + "/versions/"
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+agent+"/publish", tok, nil), 204)
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+agent+"/rollout", tok, map[string]any{"variants": []map[string]any{
		{"version": 2, "weight": 90}, {"version": 1, "weight": 10}}}), 200)
	// Versions 3 .. the bound written straight to storage: a thousand publishes would
	// test nothing more.
	err := e.Store.Update(context.Background(), func(tx service.Tx) error {
		v, err := tx.AgentVersion(agent, 1)
		if err != nil {
			return err
		}
		for n := 3; n <= validate.MaxVersionsPerAgent; n++ {
			c := *v
			c.VersionNumber = n
			if err := tx.PutAgentVersion(&c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, method, path string }{
		{"a running campaign's delete", "DELETE", "/api/v1/campaigns/" + running},
		{"a canceled campaign's with its call in progress", "DELETE", "/api/v1/campaigns/" + calling},
		{"the published version's delete", "DELETE", versions + "2"},
		{"a rollout variant's delete", "DELETE", versions + "1"},
		{"a publish at the bound", "POST", "/api/v1/agents/" + agent + "/publish"},
	}
	before := dumpStore(t, e.Store)
	for _, c := range cases {
		r := e.Do(c.method, c.path, tok, nil)
		testkit.Expect(t, r, 409)
		if r.Code() != data.ECONFLICT {
			t.Errorf("%s: %s, want code conflict", c.name, r.Body)
		}
		if changed := before.diff(dumpStore(t, e.Store), 8); len(changed) > 0 {
			t.Fatalf("%s (409) changed the store: %v", c.name, changed)
		}
	}
}
