package console_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
)

// TestRolloutFormReachesEveryVersion: with 102 versions, the rollout form shows the newest
// 100 and a More versions button; its round-trip shows the oldest with the weight typed
// for the newest kept, and a save of both starts the rollout. A version typed by its
// number is added as well, and one the agent does not hold is the API's 422 beside that
// field, nothing stored.
func TestRolloutFormReachesEveryVersion(t *testing.T) {
	e := testenv.Start(t)
	id := createAgent(t, e, e.Owner.Token, "Prolific")
	for i := range 102 {
		if res := e.Do(nil, "PUT", "/api/v1/agents/"+id, e.Owner.Token, map[string]any{"prompt_config": map[string]any{"prompt": fmt.Sprintf("Take %d.", i)}}); res.Status != http.StatusOK {
			t.Fatalf("update: %d %s", res.Status, res.Body)
		}
		if res := e.Do(nil, "POST", "/api/v1/agents/"+id+"/publish", e.Owner.Token, nil); res.Status != http.StatusNoContent {
			t.Fatalf("publish: %d %s", res.Status, res.Body)
		}
	}
	s := e.SignIn(e.Owner, e.Owner.WorkspaceID)
	get := func(path string) string {
		t.Helper()
		res := e.Do(s.Client, "GET", path, "", nil)
		if res.Status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, res.Status, res.Body)
		}
		return string(res.Body)
	}
	panel := get("/agents/" + id + "/rollout-panel")
	if strings.Contains(panel, `name="weight_1"`) || !strings.Contains(panel, `name="weight_102"`) {
		t.Fatal("the first page of versions is not the newest 100")
	}
	more := regexp.MustCompile(`name="more_versions" value="([^"]+)"[^>]*>More versions<`).FindStringSubmatch(panel)
	if more == nil {
		t.Fatal("no More versions button with 102 versions")
	}
	next := get("/agents/" + id + "/rollout?" + url.Values{"more_versions": {html.UnescapeString(more[1])}, "weight_102": {"60"}}.Encode())
	for _, want := range []string{`name="weight_1" type="number"`, `name="weight_2" type="number"`, `name="weight_102" type="number" min="0" max="100" step="1" value="60"`, `>Newer versions<`} {
		if !strings.Contains(next, want) {
			t.Errorf("the next page of versions lacks %s", want)
		}
	}

	csrf := e.CSRF(s)
	rolloutOf := func() string {
		res := e.Do(nil, "GET", "/api/v1/agents/"+id+"/rollout", e.Owner.Token, nil)
		return string(res.Body)
	}
	bad := e.Do(s.Client, "POST", "/agents/"+id+"/rollout", "", url.Values{"csrf_token": {csrf}, "weight_102": {"60"}, "other_version": {"999"}, "other_weight": {"40"}})
	if bad.Status != http.StatusUnprocessableEntity || !regexp.MustCompile(`id="w-other"[^>]*value="999"`).Match(bad.Body) || !strings.Contains(string(bad.Body), `id="w-other-err"`) {
		t.Errorf("a version the agent does not hold: %d %.600s", bad.Status, bad.Body)
	}
	if got := rolloutOf(); !strings.Contains(got, "not_found") {
		t.Errorf("a refused rollout was stored: %s", got)
	}
	ok := e.Do(s.Client, "POST", "/agents/"+id+"/rollout", "", url.Values{"csrf_token": {csrf}, "weight_102": {"60"}, "other_version": {"1"}, "other_weight": {"40"}})
	if ok.Status != http.StatusSeeOther {
		t.Fatalf("a rollout with version 1 typed: %d %s", ok.Status, ok.Body)
	}
	if got := rolloutOf(); !strings.Contains(got, `"version":1,`) || !strings.Contains(got, `"version":102,`) {
		t.Errorf("the rollout: %s", got)
	}
}
