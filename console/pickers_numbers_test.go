package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
)

// TestNumberPickersFind: with 106 numbers, the number pickers offer a search (the numbers
// list's q=) that finds the oldest by its nickname or by its digits typed with spaces and
// a +, keeps a chosen number named, and shows the API's refusal past the bound.
func TestNumberPickersFind(t *testing.T) {
	e := testenv.Start(t)
	w := newPickWorkspace(t, e)
	s := e.SignIn(e.Owner, e.Owner.WorkspaceID)
	get := func(path string) string {
		t.Helper()
		res := e.Do(s.Client, "GET", path, "", nil)
		if res.Status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, res.Status, res.Body)
		}
		return string(res.Body)
	}
	far := option(w.farNumber, "Far line (+14155550000)", false)
	for _, c := range []struct{ page, id string }{{"/calls", "c-number"}, {"/campaigns", "c-number"}} {
		first := get(c.page)
		if !strings.Contains(first, `name="find_number_id"`) || !strings.Contains(first, "Find numbers by nickname or number") {
			t.Errorf("%s: no numbers search offered with more than 100 numbers", c.page)
		}
		for _, q := range []string{"far", "+1 415 555 0000"} {
			sel := selectOf(get(c.page+"?"+url.Values{"find_number_id": {q}}.Encode()), c.id)
			if !strings.Contains(sel, far) || strings.Count(sel, "<option") != 2 { // None and the match
				t.Errorf("%s: the search %q: %.400s", c.page, q, sel)
			}
		}
	}
	for _, n := range []int{255, 256} {
		page := get("/calls?" + url.Values{"find_number_id": {strings.Repeat("é", n)}, "number_id": {w.farNumber}}.Encode())
		refused := strings.Contains(page, `id="c-number-found" role="alert">The search must not be greater than 255 characters`)
		if refused != (n > 255) || !strings.Contains(selectOf(page, "c-number"), option(w.farNumber, "Far line (+14155550000)", true)) {
			t.Errorf("a numbers search of %d characters: refused %v, picker %.200s", n, refused, selectOf(page, "c-number"))
		}
	}
}
