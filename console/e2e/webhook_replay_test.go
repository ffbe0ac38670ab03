package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// A webhook's replay range is typed in the browser's time zone, as its labels say, and
// the server reads it so: in New York (UTC-5 in winter, UTC-4 in summer) a range typed
// around an event's local time replays that event. Read as UTC, the same range would be
// four or five hours off and replay nothing.
func TestWebhookReplayRangeInTheBrowsersTimeZone(t *testing.T) {
	recv, got := webhookReceiver(t)
	b := signedIn(t)
	b.inTimeZone("America/New_York")
	// The agent first, then the webhook: its creation is delivered only by the replay.
	agent := b.mustAPI(http.StatusCreated, "POST", "/api/v1/agents", map[string]any{"name": "Replayed"})
	created, err := time.Parse(time.RFC3339Nano, agent["created_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	hook := b.mustAPI(http.StatusCreated, "POST", "/api/v1/webhooks", map[string]any{"url": recv.URL + "/hook", "events": []string{"agent.created"}})

	b.open("/webhooks/" + hook["id"].(string))
	var zone, label, from string
	b.eval("zone", `document.querySelector('#replay input[name="tz"]').value`, &zone)
	b.eval("label", `document.querySelector('label[for="rp-from"]').textContent`, &label)
	b.eval("from", `document.getElementById("rp-from").value`, &from)
	if zone != "America/New_York" || !strings.Contains(label, "America/New_York") {
		t.Fatalf("the replay form's zone %q, label %q: want the browser's, America/New_York", zone, label)
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	// The server wrote a day ago in UTC; the field shows it in New York's time.
	shown, err := time.ParseInLocation("2006-01-02T15:04", from, ny)
	if err != nil || time.Since(shown) < 23*time.Hour || time.Since(shown) > 25*time.Hour {
		t.Fatalf("the prefilled From %q is not a day ago in New York's time (%v)", from, err)
	}

	local := func(t time.Time) string { return t.In(ny).Format("2006-01-02T15:04") }
	b.run("range", chromedp.SetValue("#rp-from", local(created.Add(-10*time.Minute)), chromedp.ByID),
		chromedp.SetValue("#rp-to", local(created.Add(10*time.Minute)), chromedp.ByID),
		chromedp.Click(`#replay button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(".notice", chromedp.ByQuery))
	select {
	case m := <-got:
		if !strings.Contains(m, "agent.created") || !strings.Contains(m, "Replayed") {
			t.Errorf("the receiver got %q, want the agent's creation", m)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the replay of a range typed in New York's time delivered nothing")
	}

	// A refused range (To before From) comes back as typed, in New York's time, its
	// message beside To: it came back as the last day's range.
	bad := [2]string{local(created.Add(time.Hour)), local(created)}
	b.run("refused range", chromedp.SetValue("#rp-from", bad[0], chromedp.ByID),
		chromedp.SetValue("#rp-to", bad[1], chromedp.ByID),
		chromedp.Click(`#replay button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#rp-to-err", chromedp.ByID))
	var again [2]string
	b.eval("from again", `document.getElementById("rp-from").value`, &again[0])
	b.eval("to again", `document.getElementById("rp-to").value`, &again[1])
	if again != bad {
		t.Errorf("the refused range came back as %v, want it as typed, %v", again, bad)
	}
}
