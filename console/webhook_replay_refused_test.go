package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
)

// TestWebhookReplayRefusedKeepsTheRange: a refused replay (to before from) showed the
// API's message only at the top of the page and the form again with the last day's
// range, what was typed lost; it is shown again as typed (in UTC, the fields' data-utc,
// read in the zone the form named) with the message beside its field.
func TestWebhookReplayRefusedKeepsTheRange(t *testing.T) {
	e := testenv.Start(t)
	wh := e.Do(nil, "POST", "/api/v1/webhooks", e.Owner.Token, map[string]any{"url": "https://example.com/hook", "events": []string{"call.ended"}})
	if wh.Status != http.StatusCreated {
		t.Fatalf("create webhook: %d %s", wh.Status, wh.Body)
	}
	s := e.SignIn(e.Owner, e.Owner.WorkspaceID)
	res := e.Do(s.Client, "POST", "/webhooks/"+wh.Data()["id"].(string)+"/replay", "", url.Values{"csrf_token": {e.CSRF(s)},
		"tz": {"Europe/Paris"}, "from": {"2026-12-03T00:00"}, "to": {"2026-12-01T00:00"}})
	if res.Status != http.StatusUnprocessableEntity {
		t.Fatalf("replay to before from: %d", res.Status)
	}
	page := string(res.Body)
	for _, want := range []string{
		`<input id="rp-from" name="from" type="datetime-local" data-utc value="2026-12-02T23:00">`,
		`<input id="rp-to" name="to" type="datetime-local" data-utc value="2026-11-30T23:00" aria-invalid="true" aria-describedby="rp-to-err">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the refused replay's form lacks %s", want)
		}
	}
	if !regexp.MustCompile(`<p class="err" id="rp-to-err" data-for="rp-to">To must be[^<]*</p>`).MatchString(page) {
		t.Errorf("the refusal is not beside the To field:\n%s", page)
	}
}
