package server_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// filteredIDs reads a list's ids in order, and its meta.
func filteredIDs(t *testing.T, r *testkit.Response) ([]string, map[string]any) {
	t.Helper()
	testkit.Expect(t, r, 200)
	var ids []string
	for _, x := range r.List() {
		ids = append(ids, x.(map[string]any)["id"].(string))
	}
	return ids, r.Meta()
}

// stateFilterFaults is the table of a one-value filter's refusals: name given empty,
// unknown, in another case, comma-separated, repeated; and with a bad per_page, both
// told. allowed are its values.
func stateFilterFaults(t *testing.T, e *testkit.Server, token, path, name string, allowed []string) {
	t.Helper()
	oneOf := "must be one of: " + strings.Join(allowed, ", ")
	for _, c := range []struct {
		query   string
		fields  []string
		message string
	}{
		{name + "=", []string{name}, oneOf},
		{name + "=failing", []string{name}, oneOf},
		{name + "=" + strings.ToUpper(allowed[0]), []string{name}, oneOf},
		{name + "=" + url.QueryEscape(allowed[0]+","+allowed[1]), []string{name}, oneOf},
		{name + "=" + allowed[0] + "&" + name + "=" + allowed[1], []string{name}, "must be given once"},
		{name + "=nope&per_page=0", []string{name, "per_page"}, oneOf},
	} {
		r := e.Do("GET", path+"?"+c.query, token, nil)
		testkit.ExpectFields(t, r, c.fields...)
		if msg, _ := r.FieldErrors()[name].([]any); len(msg) == 0 || !strings.Contains(msg[0].(string), c.message) {
			t.Errorf("?%s: %s's message %v, want one saying %q", c.query, name, msg, c.message)
		}
	}
	for _, v := range allowed {
		testkit.Expect(t, e.Do("GET", path+"?"+name+"="+v, token, nil), 200)
	}
}

// TestCampaignRecipientsStateFilter: ?state= lists the recipients in that state, as
// the list shows them (a canceled campaign's pending ones read canceled); every
// refusal names state with its values; a cursor is bound to its filter.
func TestCampaignRecipientsStateFilter(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	phones := []string{"+14155550101", "+14155550102", "+14155550103", "+14155550104"}
	id := e.create(e.campaignBody(phones, nil))
	path := "/api/v1/campaigns/" + id + "/recipients"
	stateFilterFaults(t, e.Server, e.Owner.Token, path, "state", data.RecipientStates)

	byPhone := map[string]string{}
	for p, r := range e.recipients(id) {
		byPhone[p] = r["id"].(string)
	}
	phonesOf := func(query string) []string {
		t.Helper()
		r := e.Do("GET", path+"?per_page=100&"+query, e.Owner.Token, nil)
		testkit.Expect(t, r, 200)
		var out []string
		for _, x := range r.List() {
			m := x.(map[string]any)
			if want, _ := url.ParseQuery(query); want.Get("state") != m["state"] {
				t.Errorf("?%s listed %s in state %v", query, m["phone_number"], m["state"])
			}
			out = append(out, m["phone_number"].(string))
		}
		slices.Sort(out)
		return out
	}
	tasks := toNumbers(e.claim(2))
	var leased, left []string
	for _, p := range phones {
		if tasks[p] != nil {
			leased = append(leased, p)
		} else {
			left = append(left, p)
		}
	}
	if len(leased) != 2 {
		t.Fatalf("claimed %v, want 2", leased)
	}
	e.end(tasks[leased[0]], "ended", "")
	for state, want := range map[string][]string{
		data.RecipientPending: left, data.RecipientInProgress: leased[1:], data.RecipientCompleted: leased[:1],
		data.RecipientSuppressed: nil, data.RecipientExhausted: nil, data.RecipientCanceled: nil,
	} {
		if got := phonesOf("state=" + state); !slices.Equal(got, want) {
			t.Errorf("state=%s: %v, want %v", state, got, want)
		}
	}

	// A cursor under one filter, then under another or none.
	first, meta := filteredIDs(t, e.Do("GET", path+"?state=pending&per_page=1", e.Owner.Token, nil))
	next, _ := meta["next_cursor"].(string)
	if len(first) != 1 || next == "" {
		t.Fatalf("pending, per_page=1: %v %v", first, meta)
	}
	second, _ := filteredIDs(t, e.Do("GET", path+"?state=pending&per_page=1&cursor="+next, e.Owner.Token, nil))
	if len(second) != 1 || second[0] == first[0] {
		t.Errorf("pending, second page: %v after %v", second, first)
	}
	testkit.ExpectFields(t, e.Do("GET", path+"?state=completed&per_page=1&cursor="+next, e.Owner.Token, nil), "cursor")
	testkit.ExpectFields(t, e.Do("GET", path+"?per_page=1&cursor="+next, e.Owner.Token, nil), "cursor")

	testkit.Expect(t, e.Do("POST", "/api/v1/campaigns/"+id+"/cancel", e.Owner.Token, nil), 200)
	if got := phonesOf("state=pending"); len(got) != 0 {
		t.Errorf("a canceled campaign's pending: %v, want none (they read canceled)", got)
	}
	if got := phonesOf("state=canceled"); !slices.Equal(got, left) {
		t.Errorf("a canceled campaign's canceled: %v, want %v", got, left)
	}
	if got := phonesOf("state=in_progress"); !slices.Equal(got, leased[1:]) {
		t.Errorf("a canceled campaign's call in progress: %v, want %v", got, leased[1:])
	}
	// The cursor taken under state=pending before the cancel still reads under it.
	if after, _ := filteredIDs(t, e.Do("GET", path+"?state=pending&per_page=1&cursor="+next, e.Owner.Token, nil)); len(after) != 0 {
		t.Errorf("pending after the cancel, from the earlier cursor: %v, want none", after)
	}
	testkit.Expect(t, e.Do("GET", "/api/v1/campaigns/cmp_01JD6ZZZZZZZZZZZZZZZZZZZZZ/recipients?state=pending", e.Owner.Token, nil), 404)
}

// TestTestRunListStatusFilter: ?status= lists the agent's runs in that status; every
// refusal names status with its values.
func TestTestRunListStatusFilter(t *testing.T) {
	e := newTestsEnv(t)
	agent := e.bookingAgent(t, "Trattoria")
	e.createTest(t, agent, scripted("greets", []string{"hello"}, map[string]any{"type": "says", "pattern": "Trattoria"}))
	e.publish(t, e.tok, agent, false, 204)
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+agent, e.tok, map[string]any{"prompt_config": map[string]any{"welcome_message": "Hi, Pizzeria here."}}), 200)
	passed := e.run(t, agent, map[string]any{"version": 1})
	failed := e.run(t, agent, map[string]any{"version": "draft"})
	if passed["status"] != data.TestPassed || failed["status"] != data.TestFailed {
		t.Fatalf("runs: %v and %v, want passed and failed", passed["status"], failed["status"])
	}
	path := "/api/v1/agents/" + agent + "/test-runs"
	stateFilterFaults(t, e.Server, e.tok, path, "status", data.TestRunStatuses)
	for status, want := range map[string][]string{
		data.TestPassed: {passed["id"].(string)}, data.TestFailed: {failed["id"].(string)},
		data.TestQueued: nil, data.TestRunning: nil, data.TestError: nil,
	} {
		if got, _ := filteredIDs(t, e.Do("GET", path+"?status="+status, e.tok, nil)); !slices.Equal(got, want) {
			t.Errorf("status=%s: %v, want %v", status, got, want)
		}
	}
	_, meta := filteredIDs(t, e.Do("GET", path+"?per_page=1", e.tok, nil))
	next, _ := meta["next_cursor"].(string)
	if next == "" {
		t.Fatalf("two runs, per_page=1: no next_cursor")
	}
	testkit.ExpectFields(t, e.Do("GET", path+"?status=passed&per_page=1&cursor="+next, e.tok, nil), "cursor")
}
