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
			// The delete confirmations of a knowledge base another's agent uses are the
			// API's refusal (TestConfirmationsOfRecordsOfHiddenAgentsAreRefused): 403.
			want := http.StatusOK
			if kbID == ofOther && strings.HasSuffix(page, "/delete") {
				want = http.StatusForbidden
			}
			for range 3 { // a load, and the polls that follow it
				res := e.Do(dev.Client, "GET", "/knowledge-bases/"+kbID+page, "", nil)
				if res.Status != want {
					t.Fatalf("/knowledge-bases/%s%s: %d, want %d", kbID, page, res.Status, want)
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

// TestConsolePagesWriteNothing: no page the console serves on a GET sends the API
// anything but reads, for the owner and for a developer limited to one agent (whose
// pages decide what to offer from what the API answers, never from trying a write). The
// one POST a GET may make is the knowledge base's retrieval test, a read asked for with
// ?q=, which these pages do not ask.
func TestConsolePagesWriteNothing(t *testing.T) {
	e := testenv.Start(t)
	res := e.Do(nil, "POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": "+14155550100", "provider": "twilio"})
	if res.Status != http.StatusCreated {
		t.Fatalf("create number: %d %s", res.Status, res.Body)
	}
	number := res.Data()["id"].(string)
	mine := makeConsoleAgent(t, e, "Alpha line", number, 0)
	other := makeConsoleAgent(t, e, "Bravo line", number, 1)
	kb := e.Do(nil, "POST", "/api/v1/knowledge-bases", e.Owner.Token, map[string]any{"name": "Facts",
		"texts": []any{map[string]any{"title": "Hours", "content": "We open at nine."}}})
	if kb.Status != http.StatusCreated {
		t.Fatalf("create knowledge base: %d %s", kb.Status, kb.Body)
	}
	kbID := kb.Data()["id"].(string)
	text := kb.Data()["texts"].([]any)[0].(map[string]any)["id"].(string)
	if r := e.Do(nil, "PUT", "/api/v1/agents/"+other.id, e.Owner.Token, map[string]any{"llm_config": map[string]any{"knowledge_base_ids": []string{kbID}}}); r.Status != http.StatusOK {
		t.Fatalf("give Bravo the knowledge base: %d %s", r.Status, r.Body)
	}
	wh := e.Do(nil, "POST", "/api/v1/webhooks", e.Owner.Token, map[string]any{"url": "https://example.com/hook", "events": []string{"*"}})
	if wh.Status != http.StatusCreated {
		t.Fatalf("create webhook: %d %s", wh.Status, wh.Body)
	}
	limited := e.NewUser("limited@example.com", false)
	addMember(t, e, limited, map[string]any{"role": "developer", "agent_ids": []string{mine.id}})
	a, k := "/agents/"+mine.id, "/knowledge-bases/"+kbID
	pages := []string{"/", "/agents", a, a + "/versions", a + "/versions/1/delete", a + "/versions/1/restore", a + "/tests",
		a + "/tests/new", a + "/tests/" + mine.test, a + "/tests/" + mine.test + "/delete", a + "/analysis", a + "/try",
		a + "/rollout-panel", a + "/rollout", a + "/delete", "/calls", "/calls/" + mine.call, "/calls/" + mine.call + "/delete", "/conversations",
		"/campaigns", "/campaigns/" + mine.campaign, "/campaigns/" + mine.campaign + "/progress", "/campaigns/" + mine.campaign + "/cancel",
		"/analytics", "/numbers", "/numbers/" + number, "/numbers/" + number + "/delete", "/knowledge-bases", k, k + "/sources",
		k + "/delete", k + "/sources/texts/" + text + "/delete", "/jobs", "/api-keys", "/account", "/workspace", "/workspace/audit",
		"/workspace/prices", "/workspace/privacy", "/workspace/delete", "/suppressions", "/webhooks", "/webhooks/" + wh.Data()["id"].(string),
		"/users",
		// The pickers' round-trips (pickers.go): a search and a page of choices.
		"/calls?find_agent_id=a&more_number_id=", "/calls?find_number_id=415", a + "/rollout?more_versions=x&weight_1=5", "/conversations?find_agent_id=a", "/analytics?find_agent_id=a",
		"/jobs?find_agent_id=a", "/campaigns?name=N&find_agent_id=a&more_number_id=", "/numbers?find_inbound_agent_id=a",
		"/numbers/" + number + "?find_outbound_agent_id=a&etag=x", "/api-keys?find_agent_ids=a", "/workspace?find_new=a&role=member"}
	for _, u := range []*testenv.User{e.Owner, limited} {
		s := e.SignIn(u, e.Owner.WorkspaceID)
		before := apiRequests(t, e)
		for _, page := range pages {
			if res := e.Do(s.Client, "GET", page, "", nil); res.Status >= http.StatusInternalServerError {
				t.Errorf("%s, as %s: %d", page, u.Email, res.Status)
			}
		}
		after := apiRequests(t, e)
		reads := 0
		for k, n := range after {
			if method, _, _ := strings.Cut(k, " "); method != "GET" && method != "HEAD" && n != before[k] {
				t.Errorf("%s's reading of %d pages sent %d × %s", u.Email, len(pages), n-before[k], k)
			} else {
				reads += n - before[k]
			}
		}
		if reads < len(pages) {
			t.Errorf("%d API reads counted for %d pages read by %s: the count misses the console's calls", reads, len(pages), u.Email)
		}
	}
}

// TestConsoleRefreshesAskOneRead: the parts of pages that refresh themselves (a
// campaign's progress every 2 s, a knowledge base's sources and a test run's progress
// every second) each ask the API one read per refresh, of the record they show: not the
// recipients, agent names or anything else of the page around them.
func TestConsoleRefreshesAskOneRead(t *testing.T) {
	e := testenv.Start(t)
	res := e.Do(nil, "POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": "+14155550100", "provider": "twilio"})
	if res.Status != http.StatusCreated {
		t.Fatalf("create number: %d %s", res.Status, res.Body)
	}
	mine := makeConsoleAgent(t, e, "Alpha line", res.Data()["id"].(string), 0)
	kb := e.Do(nil, "POST", "/api/v1/knowledge-bases", e.Owner.Token, map[string]any{"name": "Facts",
		"texts": []any{map[string]any{"title": "Hours", "content": "We open at nine."}}})
	if kb.Status != http.StatusCreated {
		t.Fatalf("create knowledge base: %d %s", kb.Status, kb.Body)
	}
	run := e.Do(nil, "POST", "/api/v1/agents/"+mine.id+"/test-runs", e.Owner.Token, map[string]any{})
	if run.Status != http.StatusAccepted {
		t.Fatalf("start a test run: %d %s", run.Status, run.Body)
	}
	limited := e.NewUser("limited@example.com", false)
	addMember(t, e, limited, map[string]any{"role": "developer", "agent_ids": []string{mine.id}})
	for fragment, route := range map[string]string{
		"/campaigns/" + mine.campaign + "/progress":                                    "/api/v1/campaigns/{campaign_id}",
		"/knowledge-bases/" + kb.Data()["id"].(string) + "/sources":                    "/api/v1/knowledge-bases/{knowledge_base_id}",
		"/agents/" + mine.id + "/test-runs/" + run.Data()["id"].(string) + "/progress": "/api/v1/agents/{agent_id}/test-runs/{run_id}",
	} {
		for _, u := range []*testenv.User{e.Owner, limited} {
			s := e.SignIn(u, e.Owner.WorkspaceID)
			before := apiRequests(t, e)
			const polls = 5
			for range polls {
				if res := e.Do(s.Client, "GET", fragment, "", nil); res.Status != http.StatusOK {
					t.Fatalf("%s, as %s: %d", fragment, u.Email, res.Status)
				}
			}
			after := apiRequests(t, e)
			for k, n := range after {
				want := before[k]
				if k == "GET "+route {
					want += polls
				}
				if n != want {
					t.Errorf("%d refreshes of %s, as %s: %d × %s, want %d", polls, fragment, u.Email, n-before[k], k, want-before[k])
				}
			}
		}
	}
}
