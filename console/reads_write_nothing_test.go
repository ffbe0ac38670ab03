package console_test

import (
	"bufio"
	"bytes"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
)

// apiRequestLine is a line of /metrics counting API requests: its method and route.
var apiRequestLine = regexp.MustCompile(`^voiceapi_http_requests_total\{method="([A-Z]+)",route="(/api/v1[^"]*)",status="\d+"\} (\d+)$`)

// apiRequests counts the requests the API has served, by method and route, from /metrics
// (read with the owner's token: an instance administrator). The console's pages call the
// API in process, through the same middleware, so they count.
func apiRequests(t *testing.T, e *testenv.Env) map[string]int {
	t.Helper()
	res := e.Do(nil, "GET", "/metrics", e.Owner.Token, nil)
	if res.Status != http.StatusOK {
		t.Fatalf("/metrics: %d %s", res.Status, res.Body)
	}
	out := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(res.Body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		m := apiRequestLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[3])
		out[m[1]+" "+m[2]] += n
	}
	return out
}

// TestConsoleKnowledgeBasePagesWriteNothing: the pages of a knowledge base, and the
// sources table the page polls every second while a source is pending, ask the API
// nothing but reads, for a member limited to some agents too, whose page is read-only
// when an agent they do not see uses the knowledge base. (They once sent an update that
// changed nothing to learn that: a write transaction, a rate-limited request and a
// refusal in the logs at each load and each second of polling.)
func TestConsoleKnowledgeBasePagesWriteNothing(t *testing.T) {
	e := testenv.Start(t)
	kb := func(name string) (id, textID string) {
		res := e.Do(nil, "POST", "/api/v1/knowledge-bases", e.Owner.Token, map[string]any{"name": name,
			"texts": []any{map[string]any{"title": "Hours", "content": "We open at nine."}}})
		if res.Status != http.StatusCreated {
			t.Fatalf("create knowledge base: %d %s", res.Status, res.Body)
		}
		texts := res.Data()["texts"].([]any)
		return res.Data()["id"].(string), texts[0].(map[string]any)["id"].(string)
	}
	ofMine, mineText := kb("Alpha facts")
	ofOther, otherText := kb("Bravo facts")
	agent := func(name, kbID string) string {
		res := e.Do(nil, "POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": name, "llm_config": map[string]any{"knowledge_base_ids": []string{kbID}}})
		if res.Status != http.StatusCreated {
			t.Fatalf("create agent: %d %s", res.Status, res.Body)
		}
		return res.Data()["id"].(string)
	}
	mine := agent("Alpha line", ofMine)
	agent("Bravo line", ofOther)
	limited := e.NewUser("limited@example.com", false)
	addMember(t, e, limited, map[string]any{"role": "developer", "agent_ids": []string{mine}})
	dev := e.SignIn(limited, e.Owner.WorkspaceID)
	before := apiRequests(t, e)
	for kbID, text := range map[string]string{ofMine: mineText, ofOther: otherText} {
		for _, page := range []string{"", "/sources", "/delete", "/sources/texts/" + text + "/delete"} {
			for range 3 { // a load, and the polls that follow it
				res := e.Do(dev.Client, "GET", "/knowledge-bases/"+kbID+page, "", nil)
				if res.Status != http.StatusOK {
					t.Fatalf("/knowledge-bases/%s%s: %d", kbID, page, res.Status)
				}
				if offered := strings.Contains(string(res.Body), "Upload files"); page == "" && offered != (kbID == ofMine) {
					t.Errorf("/knowledge-bases/%s offers uploads: %v", kbID, offered)
				}
			}
		}
	}
	after := apiRequests(t, e)
	for k, n := range after {
		if method, _, _ := strings.Cut(k, " "); method != "GET" && method != "HEAD" && n != before[k] {
			t.Errorf("reading knowledge base pages sent %d × %s", n-before[k], k)
		}
	}
	// The count sees the pages' calls: each page read its knowledge base.
	if show := "GET /api/v1/knowledge-bases/{knowledge_base_id}"; after[show]-before[show] < 24 {
		t.Errorf("%d × %s counted for 24 pages: the count misses the console's calls", after[show]-before[show], show)
	}
}
