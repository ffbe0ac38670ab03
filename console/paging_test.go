package console

import (
	"net/http/httptest"
	"testing"
)

// TestPagerKeepsTheQuery: a list's newer and older links are the page's own query with
// only that list's cursor swapped; none where the API gives no cursor.
func TestPagerKeepsTheQuery(t *testing.T) {
	page := func(next, prev any) *reply {
		return &reply{Body: map[string]any{"meta": map[string]any{"next_cursor": next, "prev_cursor": prev}}}
	}
	for _, c := range []struct {
		url, key     string
		res          *reply
		newer, older string
	}{
		{"/calls?agent_id=agt_1&direction=inbound", "cursor", page("N", nil), "", "?agent_id=agt_1&cursor=N&direction=inbound"},
		{"/calls?agent_id=agt_1&cursor=N", "cursor", page("M", "P"), "?agent_id=agt_1&cursor=P", "?agent_id=agt_1&cursor=M"},
		{"/calls?cursor=N", "cursor", page(nil, "P"), "?cursor=P", ""},
		{"/agents/agt_1/tests?tests_cursor=T", "runs_cursor", page("R", nil), "", "?runs_cursor=R&tests_cursor=T"},
		{"/jobs", "cursor", page(nil, nil), "", ""},
	} {
		got := pagerOf(httptest.NewRequest("GET", c.url, nil), c.key, c.res)
		if string(got.Newer) != c.newer || string(got.Older) != c.older {
			t.Errorf("%s on %s: newer %q, older %q; want %q, %q", c.url, c.key, got.Newer, got.Older, c.newer, c.older)
		}
	}
}
