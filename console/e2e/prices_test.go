package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestPriceTablePage: an owner finds the price table from the workspace page, sets two
// prices, sees a bad table refused field by field with nothing stored, and a save over
// someone else's meanwhile refused as a conflict in words with a reload offered. A
// developer, whom the API refuses the table (owners and admins read and write it), is
// offered no link, is shown the API's refusal, and cannot save one.
func TestPriceTablePage(t *testing.T) {
	b := signedIn(t)
	e := b.env
	stored := func() string {
		raw, _ := json.Marshal(b.mustAPI(http.StatusOK, "GET", "/api/v1/price-table", nil))
		return string(raw)
	}
	row := func(i int, provider, model, unit, price string) {
		n := string(rune('0' + i))
		b.run("row "+n, chromedp.SetValue("#pr-provider-"+n, provider, chromedp.ByQuery),
			chromedp.SetValue("#pr-model-"+n, model, chromedp.ByQuery), chromedp.SetValue("#pr-price-"+n, price, chromedp.ByQuery))
		b.setSelect("#pr-unit-"+n, unit)
	}

	b.open("/workspace")
	b.followText("Prices")
	b.waitText("No prices yet.")
	b.run("currency", chromedp.SetValue("#pr-currency", "EUR", chromedp.ByQuery))
	row(0, "groq", "llama-3.3-70b-versatile", "llm_input_1m_tokens", "0.59")
	row(1, "elevenlabs", "*", "tts_1m_characters", "50")
	b.submit("#pr-currency")
	b.waitText("Prices saved")
	saved := b.mustAPI(http.StatusOK, "GET", "/api/v1/price-table", nil)
	var got []string
	for _, p := range saved["prices"].([]any) {
		m := p.(map[string]any)
		got = append(got, strings.Join([]string{str(m["provider"]), str(m["model"]), str(m["unit"]), str(m["price"])}, " "))
	}
	if want := "groq llama-3.3-70b-versatile llm_input_1m_tokens 0.59|elevenlabs * tts_1m_characters 50"; saved["currency"] != "EUR" || strings.Join(got, "|") != want {
		t.Fatalf("stored after the save: %v, want %s", saved, want)
	}
	if s := b.text("#price-table"); !strings.Contains(s, "Every model") || !strings.Contains(s, "Model input, per million tokens") {
		t.Errorf("the table reads %q", s)
	}
	b.audit("prices")

	// A bad table: each fault beside its field, in the form's words; nothing stored.
	before := stored()
	b.run("currency", chromedp.SetValue("#pr-currency", "euros", chromedp.ByQuery))
	row(1, "elevenlabs", "*", "tts_1m_characters", "-1")
	row(2, "groq", "llama-3.3-70b-versatile", "llm_input_1m_tokens", "0.5")
	b.submit("#pr-currency")
	for sel, want := range map[string]string{"#pr-currency-err": "Currency", "#pr-price-1-err": "Row 2 price", "#pr-row-2-err": "Row 3"} {
		if s := b.text(sel); !strings.Contains(s, want) {
			t.Errorf("%s reads %q, want it to name %q", sel, s, want)
		}
	}
	if s := b.text("[role=alert]"); !strings.Contains(s, "Not saved") {
		t.Errorf("the refusal's summary reads %q", s)
	}
	if after := stored(); after != before {
		t.Errorf("a refused table changed the stored one:\n%s\n%s", before, after)
	}

	// Someone saves meanwhile: the page's save is refused as a conflict, in words.
	b.open("/workspace/prices")
	b.mustAPI(http.StatusOK, "PUT", "/api/v1/price-table", map[string]any{"currency": "USD", "prices": []any{}})
	row(0, "groq", "llama-3.3-70b-versatile", "llm_input_1m_tokens", "0.6")
	b.submit("#pr-currency")
	if s := b.text("#price-conflict"); !strings.Contains(s, "Someone saved the price table") {
		t.Errorf("the conflict reads %q", s)
	}
	if v := b.mustAPI(http.StatusOK, "GET", "/api/v1/price-table", nil); v["currency"] != "USD" || len(v["prices"].([]any)) != 0 {
		t.Errorf("a stale save replaced the other's table: %v", v)
	}
	b.followText("Reload the price table")
	b.waitText("No prices yet.")

	// A developer: no link, the API's refusal shown, a save refused.
	dev := e.NewUser("dev@example.com", false)
	b.mustAPI(http.StatusCreated, "POST", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/users", map[string]any{"id": dev.ID, "role": "developer"})
	b.run("sign out", chromedp.Click(`form.signout button`, chromedp.ByQuery), chromedp.WaitVisible("#email", chromedp.ByQuery))
	b.signIn(dev.Email, dev.Password, e.Owner.WorkspaceID)
	b.open("/workspace")
	var links int
	b.eval("price links", `document.querySelectorAll('a[href="/workspace/prices"]').length`, &links)
	if links != 0 {
		t.Errorf("a developer is offered the price table (%d links)", links)
	}
	b.open("/workspace/prices")
	if s := b.text("#main"); !strings.Contains(s, "admin") || strings.Contains(s, "Save prices") {
		t.Errorf("a developer's price page reads %q", s)
	}
	before = stored()
	s := e.SignIn(dev, e.Owner.WorkspaceID)
	form := url.Values{"csrf_token": {e.CSRF(s)}, "currency": {"EUR"}, "provider": {"groq"}, "model": {"*"}, "unit": {"stt_minute"}, "price": {"1"}}
	if r := e.Do(s.Client, "POST", "/workspace/prices", "", form); r.Status != http.StatusForbidden {
		t.Errorf("a developer's save: %d", r.Status)
	}
	if after := stored(); after != before {
		t.Errorf("a developer's save changed the table:\n%s\n%s", before, after)
	}
}
