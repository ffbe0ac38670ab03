package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/server"
)

// uploadCampaign posts a multipart create: settings as the campaign part, csv as the file.
func (e *campaignEnv) uploadCampaign(settings, csv string) *testkit.Response {
	e.t.Helper()
	body, ct := multipartBody(e.t, part{name: "campaign", content: []byte(settings)}, part{name: "file", filename: "list.csv", content: []byte(csv)})
	return e.Do("POST", "/api/v1/campaigns", e.Owner.Token, body, "Content-Type", ct)
}

func (e *campaignEnv) settingsJSON() string {
	return `{"name":"Survey","agent_id":"` + e.agent + `","number_id":"` + e.number + `","timezone":"Europe/Paris",` +
		`"window":{"days":["mon","tue","wed","thu","fri"],"start":"09:00","end":"18:00"},"max_concurrent":2}`
}

// A CSV upload: phone_number, an optional timezone, every other column a variable (an
// empty cell gives none); national numbers are read in the caller id's country.
func TestCampaignCSVUpload(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	csv := "phone_number,timezone,customer_name,plan\n" +
		"+14155550101,America/Los_Angeles,Ada,gold\n" +
		"(415) 555-0102,,Grace,\n" +
		"\n" +
		"415.555.0101,,Ada L.,silver\n"
	r := e.uploadCampaign(e.settingsJSON(), csv)
	testkit.Expect(t, r, 201)
	id := r.Data()["id"].(string)
	if imp := r.Data()["import"].(map[string]any); imp["rows"] != float64(3) || imp["duplicates"] != float64(1) {
		t.Fatalf("import: %v, want 3 rows with one duplicate", imp)
	}
	rs := e.recipients(id)
	ada, grace := rs["+14155550101"], rs["+14155550102"]
	if ada == nil || grace == nil || len(rs) != 2 {
		t.Fatalf("recipients: %v", keys(rs))
	}
	if v := ada["variables"].(map[string]any); v["customer_name"] != "Ada L." || v["plan"] != "silver" || ada["timezone"] != "America/Los_Angeles" || ada["line"] != float64(2) {
		t.Fatalf("merged row: %v", ada)
	}
	if v := grace["variables"].(map[string]any); v["customer_name"] != "Grace" || v["plan"] != nil || grace["timezone"] != "Europe/Paris" {
		t.Fatalf("Grace: %v", grace)
	}
}

// Point 6: every fault is a 422 naming it (CSV rows by line, JSON rows by index), and
// nothing of a refused request is stored.
func TestCampaignBadInput(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	r := e.uploadCampaign(e.settingsJSON(), "phone_number,customer_name\n+14155550101,Ada\nnot a number,Bob\n+14155550103,Cy,extra\n")
	testkit.ExpectFields(t, r, "recipients.line_4")
	r = e.uploadCampaign(e.settingsJSON(), "phone_number,customer_name\n+14155550101,Ada\nnot a number,Bob\n+1415555010,Cy\n")
	testkit.ExpectFields(t, r, "recipients.line_3.phone_number", "recipients.line_4.phone_number")
	if msg := r.FieldErrors()["recipients.line_3.phone_number"].([]any)[0].(string); !strings.HasPrefix(msg, "Line 3:") {
		t.Errorf("the message does not name the line: %q", msg)
	}
	testkit.ExpectFields(t, e.uploadCampaign(e.settingsJSON(), "number\n+14155550101\n"), "file")
	// A quote opened on line 3 and never closed is found at the end of the file: the
	// line named is the row's, where the quote is, as for every other fault of a row.
	r = e.uploadCampaign(e.settingsJSON(), "phone_number,customer_name\n+14155550101,Ada\n\"+14155550102,Bob\n+14155550103,Cy\n")
	testkit.ExpectFields(t, r, "recipients.line_3")
	if msgs, _ := r.FieldErrors()["recipients.line_3"].([]any); len(msgs) != 1 || !strings.HasPrefix(msgs[0].(string), "Line 3:") || !strings.Contains(msgs[0].(string), "line 4") {
		t.Errorf("the message should name the row's line and where the fault was found: %v", r.FieldErrors())
	}

	bad := []struct {
		name   string
		change map[string]any
		fields []string
	}{
		{"a number that cannot be normalized", map[string]any{"recipients": []any{map[string]any{"phone_number": "+14155550101"}, map[string]any{"phone_number": "12"}}}, []string{"recipients.1.phone_number"}},
		{"an unknown timezone", map[string]any{"timezone": "Mars/Olympus"}, []string{"timezone"}},
		{"an unknown recipient timezone", map[string]any{"recipients": []any{map[string]any{"phone_number": "+14155550101", "timezone": "Mars/Olympus"}}}, []string{"recipients.0.timezone"}},
		{"an empty window", map[string]any{"window": map[string]any{"days": []string{"mon"}, "start": "09:00", "end": "09:00"}}, []string{"window.end"}},
		{"a window on no day", map[string]any{"window": map[string]any{"days": []string{}, "start": "09:00", "end": "10:00"}}, []string{"window.days"}},
		{"max_concurrent 0", map[string]any{"max_concurrent": 0}, []string{"max_concurrent"}},
		{"max_concurrent past its bound", map[string]any{"max_concurrent": 1001}, []string{"max_concurrent"}},
		{"max_attempts 0", map[string]any{"retry": map[string]any{"on": []string{"busy"}, "max_attempts": 0, "backoff_minutes": 1}}, []string{"retry.max_attempts"}},
		{"an outcome that is not retried", map[string]any{"retry": map[string]any{"on": []string{"answered"}, "max_attempts": 2, "backoff_minutes": 1}}, []string{"retry.on.0"}},
		// Left out, retry.on would read as [] (retry nothing), though the default retries
		// no_answer and busy: [] is to be said.
		{"a retry without on", map[string]any{"retry": map[string]any{"max_attempts": 2, "backoff_minutes": 1}}, []string{"retry.on"}},
		{"no recipients", map[string]any{"recipients": []any{}}, []string{"recipients"}},
		// Stored, the year 10000 (in UTC) could not be read back: every campaign list and
		// job list of the workspace failed. The zero time was stored as start_at null.
		{"a start_at past 9999 in UTC", map[string]any{"start_at": "9999-12-31T23:00:00-05:00"}, []string{"start_at"}},
		{"a start_at in the year 0000", map[string]any{"start_at": "0000-06-01T00:00:00Z"}, []string{"start_at"}},
		{"a start_at of the zero time", map[string]any{"start_at": "0001-01-01T00:00:00Z"}, []string{"start_at"}},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			testkit.ExpectFields(t, e.Do("POST", "/api/v1/campaigns", e.Owner.Token, e.campaignBody([]string{"+14155550101"}, c.change)), c.fields...)
		})
	}
	r = e.Do("POST", "/api/v1/agents", e.Owner.Token, startAgentBody("Draft"))
	testkit.Expect(t, r, 201)
	draft := r.Data()["id"].(string)
	testkit.ExpectFields(t, e.Do("POST", "/api/v1/campaigns", e.Owner.Token, e.campaignBody([]string{"+14155550101"}, map[string]any{"agent_id": draft})), "agent_id")

	list := e.Do("GET", "/api/v1/campaigns", e.Owner.Token, nil)
	testkit.Expect(t, list, 200)
	if n := len(list.List()); n != 0 {
		t.Fatalf("%d campaigns stored from refused requests", n)
	}
	jobs := e.Do("GET", "/api/v1/jobs?kind=campaign.start", e.Owner.Token, nil)
	testkit.Expect(t, jobs, 200)
	if n := len(jobs.List()); n != 0 {
		t.Fatalf("%d campaign.start jobs queued by refused requests", n)
	}
	events := e.Do("GET", "/api/v1/events?type=campaign.created", e.Owner.Token, nil)
	if events.Status == 200 && len(events.List()) != 0 {
		t.Fatalf("campaign events recorded for refused requests: %d", len(events.List()))
	}
}

// An upload over the file limit is 413, and stores nothing.
func TestCampaignUploadTooLarge(t *testing.T) {
	s := testkit.NewServer(t, nil, func(c *server.Config) { c.MaxFileSize = 4 << 10 })
	csv := "phone_number\n" + strings.Repeat("+14155550101\n", 1000)
	body, ct := multipartBody(t, part{name: "campaign", content: []byte(`{"name":"x"}`)}, part{name: "file", filename: "big.csv", content: []byte(csv)})
	testkit.Expect(t, s.Do("POST", "/api/v1/campaigns", s.Owner.Token, body, "Content-Type", ct), 413)
	testkit.Expect(t, s.Do("POST", "/api/v1/suppressions/import", s.Owner.Token, csv, "Content-Type", "text/csv"), 413)
	list := s.Do("GET", "/api/v1/campaigns", s.Owner.Token, nil)
	testkit.Expect(t, list, 200)
	if len(list.List()) != 0 {
		t.Fatal("a refused upload stored a campaign")
	}
}

// The suppression list: add (201, then 200 for a number listed already, in any
// format), list, CSV import (every row or none, lines named), delete.
func TestSuppressionList(t *testing.T) {
	s := testkit.NewServer(t, nil)
	r := s.Do("POST", "/api/v1/suppressions", s.Owner.Token, map[string]any{"phone_number": "+1 (415) 555-0101", "reason": "asked"})
	testkit.Expect(t, r, 201)
	id := r.Data()["id"].(string)
	if r.Data()["phone_number"] != "+14155550101" {
		t.Fatalf("stored %v, want E.164", r.Data()["phone_number"])
	}
	testkit.Expect(t, s.Do("POST", "/api/v1/suppressions", s.Owner.Token, map[string]any{"phone_number": "+14155550101"}), 200)
	testkit.ExpectFields(t, s.Do("POST", "/api/v1/suppressions", s.Owner.Token, map[string]any{"phone_number": "4155550101"}), "phone_number")
	r = s.Do("POST", "/api/v1/suppressions/import", s.Owner.Token, "phone_number,reason\n+14155550102,x\nnope,\n", "Content-Type", "text/csv")
	testkit.ExpectFields(t, r, "rows.line_3.phone_number")
	r = s.Do("POST", "/api/v1/suppressions/import", s.Owner.Token, "phone_number,reason\n+14155550102,x\n+14155550101,\n+14155550102,\n", "Content-Type", "text/csv")
	testkit.Expect(t, r, 200)
	if d := r.Data(); d["rows"] != float64(3) || d["added"] != float64(1) || d["duplicates"] != float64(2) {
		t.Fatalf("import: %v", d)
	}
	list := s.Do("GET", "/api/v1/suppressions", s.Owner.Token, nil)
	testkit.Expect(t, list, 200)
	if len(list.List()) != 2 {
		t.Fatalf("list: %d entries, want 2", len(list.List()))
	}
	testkit.Expect(t, s.Do("DELETE", "/api/v1/suppressions/"+id, s.Owner.Token, nil), 204)
	testkit.Expect(t, s.Do("DELETE", "/api/v1/suppressions/"+id, s.Owner.Token, nil), 404)
}
