package server_test

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestSpecEveryListPaginates holds every documented list to the spec's pagination
// sentences, not only the lists the pagination tests walk:
//
//   - "List responses wrap an array in `data` and add a `meta` object" (General
//     conventions 2), with per_page, next_cursor and prev_cursor (Pagination meta);
//   - "list page size (per_page) | 1 to 100" (Limits): 0, 101 and a non-integer are 422
//     naming per_page (conventions §4), 1 and 100 are applied;
//   - a cursor is "taken from meta.next_cursor or meta.prev_cursor of an earlier
//     response": one that is not is 422 naming cursor (§4).
//
// A list is any documented GET whose 200 JSON answer declares meta, so a list added
// later is held to the same sentences without editing this test.
func TestSpecEveryListPaginates(t *testing.T) {
	e := newCampaignEnv(t, time.Now().UTC())
	tok := e.Owner.Token
	ids := map[string]string{"{workspace_id}": e.ws, "{agent_id}": e.agent}
	ids["{campaign_id}"] = e.create(e.campaignBody([]string{"+14155550199"}, nil))
	r := e.Do("POST", "/api/v1/webhooks", tok, map[string]any{"url": "https://example.com/hook", "events": []string{"*"}})
	expect(t, r, 201)
	ids["{webhook_id}"] = r.Data()["id"].(string)

	lists := documentedLists(t)
	for _, tmpl := range lists {
		p := pathParam.ReplaceAllStringFunc(tmpl, func(s string) string { return ids[s] })
		first := e.Do("GET", p, tok, nil)
		if first.Status != 200 {
			t.Errorf("GET %s: %d %.200s", p, first.Status, first.Body)
			continue
		}
		checkListPagination(t, e.startEnv, p, first)
	}
}

// checkListPagination checks one list's meta and its per_page and cursor rules.
func checkListPagination(t *testing.T, e *startEnv, p string, first *response) {
	t.Helper()
	tok := e.Owner.Token
	meta := first.Meta()
	for _, k := range []string{"per_page", "next_cursor", "prev_cursor"} {
		if _, ok := meta[k]; !ok {
			t.Errorf("GET %s: meta lacks %s: %v", p, k, meta)
		}
	}
	if _, ok := first.JSON()["data"].([]any); !ok {
		t.Errorf("GET %s: data is not an array: %.200s", p, first.Body)
	}
	if meta["per_page"] != 15.0 || meta["prev_cursor"] != nil {
		t.Errorf("GET %s: first page meta %v, want per_page 15 and no prev_cursor", p, meta)
	}
	sep := "?"
	if strings.Contains(p, "?") {
		sep = "&"
	}
	for _, n := range []string{"1", "100"} {
		r := e.Do("GET", p+sep+"per_page="+n, tok, nil)
		if r.Status != 200 || r.Meta()["per_page"] != map[string]float64{"1": 1, "100": 100}[n] || len(r.List()) > map[string]int{"1": 1, "100": 100}[n] {
			t.Errorf("GET %s per_page=%s: %d, meta %v, %d items", p, n, r.Status, r.Meta(), len(r.List()))
		}
	}
	for _, q := range []string{"per_page=0", "per_page=101", "per_page=ten", "per_page=1.5", "per_page=-1", "per_page="} {
		r := e.Do("GET", p+sep+q, tok, nil)
		if r.Status != 422 || r.FieldErrors()["per_page"] == nil || len(r.FieldErrors()) != 1 {
			t.Errorf("GET %s?%s: %d %.200s, want 422 naming per_page", p, q, r.Status, r.Body)
		}
	}
	for _, c := range []string{"garbage", "eyJpZCI6IngifQ", strings.Repeat("A", 64)} {
		r := e.Do("GET", p+sep+"cursor="+url.QueryEscape(c), tok, nil)
		if r.Status != 422 || r.FieldErrors()["cursor"] == nil || len(r.FieldErrors()) != 1 {
			t.Errorf("GET %s?cursor=%s: %d %.200s, want 422 naming cursor", p, c, r.Status, r.Body)
		}
	}
}

// documentedLists returns the path templates of the documented GETs whose 200 JSON
// answer declares a meta member: the paginated lists.
func documentedLists(t *testing.T) []string {
	t.Helper()
	_, doc := openapiDocument(t)
	schemas := path(doc, "components.schemas").(map[string]any)
	var out []string
	for p, item := range doc["paths"].(map[string]any) {
		schema, _ := path(item, "get.responses.200.content.application/json.schema").(map[string]any)
		if ref, ok := schema["$ref"].(string); ok {
			schema, _ = schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
		}
		if path(schema, "properties.meta") != nil {
			out = append(out, p)
		}
	}
	if len(out) < 15 {
		t.Fatalf("only %d documented lists: the sweep lost its lists", len(out))
	}
	return out
}
