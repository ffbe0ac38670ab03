package console

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHumanFormatsOfValues(t *testing.T) {
	for _, c := range []struct {
		name string
		got  string
		want string
	}{
		{"a whole number as JSON decodes it", str(3_600_000.0), "3600000"},
		{"a fraction", str(0.25), "0.25"},
		{"a bool", str(true), "true"},
		{"nothing", str(nil), ""},
		{"thousands", count(12345.0), "12,345"},
		{"no thousands", count(999.0), "999"},
		{"a negative count", count(-1234.0), "-1,234"},
		{"not a number", count("x"), "—"},
		{"no duration", duration(nil), "—"},
		{"zero", duration(0.0), "0 s"},
		{"under a second", duration(850.0), "850 ms"},
		{"seconds", duration(12_000.0), "12 s"},
		{"minutes and seconds", duration(210_000.0), "3 min 30 s"},
		{"whole minutes", duration(120_000.0), "2 min"},
		{"hours drop seconds", duration(3_905_000.0), "1 h 5 min"},
		{"an hour", duration(3_600_000.0), "1 h"},
		{"an offset", clock(2_500.0), "0:02"},
		{"a long offset", clock(3_723_000.0), "1:02:03"},
		{"a limit", label("call_minutes_per_month"), "Call minutes this month"},
		{"an event type", label("knowledge_base.source_indexed"), "Knowledge base source indexed"},
		{"an acronym", label("api_key.created"), "API key created"},
		{"a brand", label("elevenlabs"), "ElevenLabs"},
		{"a scope", scopeLabel("call_history:write"), "Call history: write"},
		{"a host not resolved", deliveryFault("dial tcp: lookup hooks.example.com on 127.0.0.53:53: no such host").Summary, "The host could not be resolved"},
		{"a refused connection", deliveryFault("dial tcp 127.0.0.1:9: connect: connection refused").Summary, "The connection was refused"},
		{"a timeout", deliveryFault("no answer within 10s").Summary, "Timed out"},
		{"a TLS failure", deliveryFault("tls: failed to verify certificate: x509: certificate signed by unknown authority").Summary, "TLS failed: the certificate was not accepted"},
		{"an answer's status", deliveryFault("the receiver answered HTTP 503").Summary, "HTTP 503 Service Unavailable"},
		{"an answer's status says all", deliveryFault("the receiver answered HTTP 410").Detail, ""},
		{"an unknown error", deliveryFault("something else").Summary, "Not delivered"},
		{"a refusal's module", modulesInWords("You do not have access to the call_history module."), "You do not have access to the Call history module."},
		{"a module's code as a word", modulesInWords("the agents module; on a key with scopes, agents:read"), "the Agents module; on a key with scopes, agents:read"},
		{"a short id", shortID("agt_01JD6ABCDEFGHJKMNPQRSTVWXY"), "agt_…STVWXY"},
		{"a sketch's percentile", figure(2.9742334234766927), "2.97"},
		{"an exact mean", figure(3.0), "3"},
		{"a large figure", figure(1234567.0), "1230000"},
		{"a small figure", figure(0.000123456), "0.000123"},
		{"not a number", figure(nil), ""},
		{"a gate's state", label("tests_required"), "Tests required"},
		{"a test's status", label("not_run"), "Not run"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
	if got := string(when("2026-11-21T10:04:05.123Z")); got != `<time datetime="2026-11-21T10:04:05Z" data-when="">21 Nov 2026, 10:04 UTC</time>` {
		t.Errorf("when: %s", got)
	}
	if got := string(when(`<b>`)); got != "&lt;b&gt;" {
		t.Errorf("when of a value that is not a time: %s", got)
	}
}

// The API's messages name the form's labels; a bare word that is a label's key ("name")
// is not replaced inside other words.
func TestRelabel(t *testing.T) {
	e := &apiError{Status: 422, Message: "The phone_number field is required. (and 1 more error)", Errors: map[string][]string{
		"phone_number":                       {"The phone_number field is required."},
		"name":                               {"The name field must be unique among the tool names."},
		"privacy.redaction.rules.11.pattern": {"The privacy.redaction.rules.11.pattern field must be a valid RE2 regular expression."},
		"current_password":                   {"The current_password is incorrect."},
	}}
	got := relabel(e, fieldLabels{"phone_number": "Phone number", "name": "Name",
		"privacy.redaction.rules.#.pattern": "Rule # pattern", "current_password": "Current password"})
	want := map[string]string{
		"phone_number":                       "Phone number is required.",
		"name":                               "Name must be unique among the tool names.",
		"privacy.redaction.rules.11.pattern": "Rule 12 pattern must be a valid RE2 regular expression.",
		"current_password":                   "Current password is incorrect.",
	}
	for p, w := range want {
		if got.Errors[p][0] != w {
			t.Errorf("%s: %q, want %q", p, got.Errors[p][0], w)
		}
	}
	// Another field named in a message is its label too, unless it is part of a longer path.
	other := relabel(&apiError{Status: 422, Message: "x", Errors: map[string][]string{
		"window.end":    {"The window.end field must be after window.start (18:00): the window would be empty."},
		"user.script.0": {"The user.script.0 field is required; see user.script."},
	}}, fieldLabels{"window.start": "Opens at", "window.end": "Closes at", "user.script": "Script"})
	for p, w := range map[string]string{
		"window.end":    "Closes at must be after “Opens at” (18:00): the window would be empty.",
		"user.script.0": "The user.script.0 field is required; see “Script”.",
	} {
		if other.Errors[p][0] != w {
			t.Errorf("%s: %q, want %q", p, other.Errors[p][0], w)
		}
	}
	if got.Message != "Phone number is required. (and 1 more error)" || e.Errors["name"][0] != "The name field must be unique among the tool names." {
		t.Errorf("message %q, or the original changed", got.Message)
	}
}

// A flash opens only with its session and only on its page; a changed byte opens nothing.
func TestFlashSealedToSessionAndPage(t *testing.T) {
	h := &Handler{secure: func(*http.Request) bool { return false }}
	rec := httptest.NewRecorder()
	post := httptest.NewRequest("POST", "/webhooks", nil)
	post.AddCookie(&http.Cookie{Name: SessionCookie, Value: "1|session-a"})
	if !h.done(rec, post, "/webhooks/wh_1", flash{Notice: "Created.", At: "deliveries", Secrets: []secret{{"The signing secret", "whsec_x"}}}) {
		t.Fatal("a small flash was refused")
	}
	if loc := rec.Header().Get("Location"); loc != "/webhooks/wh_1#deliveries" || rec.Code != http.StatusSeeOther {
		t.Fatalf("redirect %d %q", rec.Code, loc)
	}
	cookie := rec.Result().Cookies()[0]
	if !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/webhooks/wh_1" || strings.Contains(cookie.Value, "whsec_x") {
		t.Fatalf("flash cookie %+v", cookie)
	}
	take := func(session, path, value string) *flash {
		r := httptest.NewRequest("GET", path, nil)
		r.AddCookie(&http.Cookie{Name: SessionCookie, Value: session})
		r.AddCookie(&http.Cookie{Name: flashCookie, Value: value})
		return h.takeFlash(httptest.NewRecorder(), r)
	}
	if f := take("1|session-a", "/webhooks/wh_1", cookie.Value); f == nil || f.Secrets[0].Value != "whsec_x" || f.Notice != "Created." {
		t.Errorf("the page it is for: %+v", f)
	}
	if f := take("1|session-b", "/webhooks/wh_1", cookie.Value); f != nil {
		t.Errorf("another session opened the flash: %+v", f)
	}
	if f := take("1|session-a", "/webhooks/wh_2", cookie.Value); f != nil {
		t.Errorf("another page took the flash: %+v", f)
	}
	tampered := []byte(cookie.Value)
	tampered[len(tampered)-2] ^= 1
	if f := take("1|session-a", "/webhooks/wh_1", string(tampered)); f != nil {
		t.Errorf("a changed flash opened: %+v", f)
	}
	big := flash{Secrets: make([]secret, 60)}
	for i := range big.Secrets {
		big.Secrets[i] = secret{"The signing secret of the webhook to https://hooks.example.com/a/long/path", "whsec_" + strings.Repeat("x", 40)}
	}
	if rec := httptest.NewRecorder(); h.done(rec, post, "/workspace", big) || rec.Code != http.StatusOK || len(rec.Result().Cookies()) != 0 {
		t.Errorf("a flash too big for a cookie: written anyway (%d)", rec.Code)
	}
}

// Whole numbers get whole ticks; durations round ones.
func TestChartAxes(t *testing.T) {
	for _, c := range []struct {
		max, top, step float64
	}{{0, 1, 1}, {2, 2, 1}, {3, 3, 1}, {7, 8, 2}, {40, 40, 10}, {123, 150, 50}} {
		if a := countAxis(c.max); a.top != c.top || a.step != c.step {
			t.Errorf("countAxis(%v) = top %v step %v, want %v %v", c.max, a.top, a.step, c.top, c.step)
		}
	}
	if a := durationAxis(150_000); a.step != 60_000 || a.top != 180_000 || a.format(60_000) != "1 min" || a.format(0) != "0" {
		t.Errorf("durationAxis(150 s) = top %v step %v", a.top, a.step)
	}
	// A tick in one unit, short enough for the axis; a bar's title exact.
	if a := durationAxis(100_000); a.format(90_000) != "1.5 min" || a.exact(90_000) != "1 min 30 s" || a.format(3_600_000) != "1 h" {
		t.Errorf("durationAxis ticks %q %q, title %q", a.format(90_000), a.format(3_600_000), a.exact(90_000))
	}
}
