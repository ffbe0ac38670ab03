package console_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
	"github.com/voiceapi/voiceapi/internal/embedtest"
)

// TestKnowledgeBaseShowsItsEmbeddings: the knowledge base page says where its embeddings
// stand, as the record does: ready with its model and progress, and, while the provider
// is down, failing with the provider's reason (the page said nothing of embeddings, so a
// team saw no fault). Run on both engines.
func TestKnowledgeBaseShowsItsEmbeddings(t *testing.T) {
	e := testenv.Start(t)
	stand := embedtest.Start()
	defer stand.Close()
	tok := e.Owner.Token
	if res := e.Do(nil, "PUT", "/api/v1/workspaces/"+e.Owner.WorkspaceID, tok, map[string]any{
		"embeddings": map[string]any{"base_url": stand.BaseURL(), "model": "walk-model"}}); res.Status != http.StatusOK {
		t.Fatalf("set the provider: %d %s", res.Status, res.Body)
	}
	res := e.Do(nil, "POST", "/api/v1/knowledge-bases", tok, map[string]any{"name": "Support",
		"texts": []any{map[string]any{"title": "Hours", "content": "We open at nine on weekdays."}}})
	if res.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	kb := res.JSON()["data"].(map[string]any)["id"].(string)
	s := e.SignIn(e.Owner, "")
	page := func(want string) string {
		t.Helper()
		waitEmbeddings(t, e, tok, kb, want)
		res := e.Do(s.Client, "GET", "/knowledge-bases/"+kb, "", nil)
		if res.Status != http.StatusOK {
			t.Fatalf("GET the knowledge base page: %d", res.Status)
		}
		return string(res.Body)
	}
	if got := page("ready"); !strings.Contains(got, `id="kb-embeddings"`) || !strings.Contains(got, "walk-model") ||
		!strings.Contains(got, "Ready") || !strings.Contains(got, "1 of 1 sources embedded") {
		t.Errorf("ready embeddings are not shown with their model and progress:\n%s", got)
	}
	stand.SetDown(true)
	if res := e.Do(nil, "POST", "/api/v1/knowledge-bases/"+kb+"/sources/add", tok, map[string]any{
		"texts": []any{map[string]any{"title": "Pets", "content": "Dogs are welcome in the garden."}}}); res.Status != http.StatusOK {
		t.Fatalf("add a text: %d %s", res.Status, res.Body)
	}
	if got := page("failing"); !strings.Contains(got, "Failing") || !strings.Contains(got, "503") ||
		!strings.Contains(got, "1 of 2 sources embedded") {
		t.Errorf("failing embeddings are not shown with the provider's reason:\n%s", got)
	}
}

// waitEmbeddings waits until the knowledge base's embeddings have status want (the job
// runs in the background).
func waitEmbeddings(t *testing.T, e *testenv.Env, tok, kb, want string) {
	t.Helper()
	var got any
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		res := e.Do(nil, "GET", "/api/v1/knowledge-bases/"+kb, tok, nil)
		got = res.JSON()["data"].(map[string]any)["embeddings"]
		if got.(map[string]any)["status"] == want {
			return
		}
	}
	t.Fatalf("embeddings never reached %q: %v", want, got)
}
