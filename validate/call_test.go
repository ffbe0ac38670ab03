package validate_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// fields returns the failing paths of err, sorted ("" when it passed).
func fields(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	e, ok := err.(*data.Error)
	if !ok || e.Code != data.EINVALID {
		t.Fatalf("not a validation error: %v", err)
	}
	return strings.Join(e.SortedFieldPaths(), ",")
}

func sp(s string) *string { return &s }

func TestE164(t *testing.T) {
	cases := map[string]bool{
		"+12": true, "+123456789012345": true, "+14155550123": true,
		"+1": false, "+1234567890123456": false, "+0123": false, "14155550123": false,
		"+1 415 555": false, "": false, "+1415555012a": false, "++14155550123": false,
	}
	for in, want := range cases {
		if got := validate.E164(in); got != want {
			t.Errorf("E164(%q) = %v", in, got)
		}
	}
}

func TestNumberRules(t *testing.T) {
	agent := "agt_01JD6ZZZZZZZZZZZZZZZZZZZZZ"
	cases := []struct {
		in   data.NumberCreate
		want string
	}{
		{data.NumberCreate{PhoneNumber: "+14155550123", Provider: "twilio"}, ""},
		{data.NumberCreate{}, "phone_number,provider"},
		{data.NumberCreate{PhoneNumber: "+14155550123", Provider: "plivo"}, "provider"},
		{data.NumberCreate{PhoneNumber: "+14155550123", Provider: "sip", Nickname: strings.Repeat("n", 255)}, ""},
		{data.NumberCreate{PhoneNumber: "+14155550123", Provider: "sip", Nickname: strings.Repeat("n", 256)}, "nickname"},
		{data.NumberCreate{PhoneNumber: "+14155550123", Provider: "sip", InboundAgentID: &agent, OutboundAgentID: sp("agt_bad")}, "outbound_agent_id"},
	}
	for _, p := range data.NumberProviders {
		cases = append(cases, struct {
			in   data.NumberCreate
			want string
		}{data.NumberCreate{PhoneNumber: "+14155550123", Provider: p}, ""})
	}
	for i, c := range cases {
		if got := fields(t, validate.NumberCreate(c.in)); got != c.want {
			t.Errorf("case %d: %q, want %q", i, got, c.want)
		}
	}
	if got := fields(t, validate.NumberUpdate(data.NumberUpdate{Provider: data.Some("x"), Nickname: data.Some(strings.Repeat("n", 256))})); got != "nickname,provider" {
		t.Errorf("update: %q", got)
	}
	if got := fields(t, validate.NumberUpdate(data.NumberUpdate{})); got != "" {
		t.Errorf("empty update: %q", got)
	}
}

func TestCallRules(t *testing.T) {
	agent := "agt_01JD6ZZZZZZZZZZZZZZZZZZZZZ"
	base := func(f func(*data.CallCreate)) data.CallCreate {
		in := data.CallCreate{AgentID: agent, Direction: "web"}
		if f != nil {
			f(&in)
		}
		return in
	}
	t0 := data.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := data.NewTime(t0.Add(time.Minute))
	items := func(n int) []data.TranscriptItem {
		out := make([]data.TranscriptItem, n)
		for i := range out {
			out[i] = data.TranscriptItem{Role: "user", Content: "x"}
		}
		return out
	}
	cases := []struct {
		name string
		in   data.CallCreate
		want string
	}{
		{"minimal", base(nil), ""},
		{"empty", data.CallCreate{}, "agent_id,direction"},
		{"direction", base(func(c *data.CallCreate) { c.Direction = "phone" }), "direction"},
		{"status", base(func(c *data.CallCreate) { c.Status = sp("done") }), "status"},
		{"inbound", base(func(c *data.CallCreate) { c.Direction = "inbound" }), "from_number,to_number"},
		{"sip", base(func(c *data.CallCreate) { c.FromNumber, c.ToNumber = sp("sip:a@b"), sp("sips:c@d.e") }), ""},
		{"bad numbers", base(func(c *data.CallCreate) { c.FromNumber, c.ToNumber = sp("sip:a"), sp("+0") }), "from_number,to_number"},
		{"version 1", base(func(c *data.CallCreate) { c.AgentVersion = new(int); *c.AgentVersion = 1 }), ""},
		{"version 0", base(func(c *data.CallCreate) { c.AgentVersion = new(int) }), "agent_version"},
		{"2000 items", base(func(c *data.CallCreate) { c.Transcript = items(2000) }), ""},
		{"2001 items", base(func(c *data.CallCreate) { c.Transcript = items(2001) }), "transcript"},
		{"roles", base(func(c *data.CallCreate) {
			c.Transcript = []data.TranscriptItem{{Role: "agent"}, {Role: "user"}, {Role: "tool"}, {Role: "system"}, {}}
		}), "transcript.3.role,transcript.4.role"},
		{"content bound", base(func(c *data.CallCreate) {
			c.Transcript = []data.TranscriptItem{{Role: "agent", Content: strings.Repeat("é", 10000), StartMS: 86_400_000}}
		}), ""},
		{"content over", base(func(c *data.CallCreate) {
			c.Transcript = []data.TranscriptItem{{Role: "agent", Content: strings.Repeat("a", 10001), StartMS: 86_400_001}}
		}), "transcript.0.content,transcript.0.start_ms"},
		{"transcript bytes", base(func(c *data.CallCreate) {
			for range 105 {
				c.Transcript = append(c.Transcript, data.TranscriptItem{Role: "user", Content: strings.Repeat("a", 10000)})
			}
		}), "transcript"},
		{"registered started", base(func(c *data.CallCreate) { c.StartedAt = &t0 }), "started_at"},
		{"ongoing ended", base(func(c *data.CallCreate) { c.Status, c.EndedAt = sp("ongoing"), &t1 }), "ended_at"},
		{"ended backwards", base(func(c *data.CallCreate) { c.Status, c.StartedAt, c.EndedAt = sp("ended"), &t1, &t0 }), "ended_at"},
		{"ended fine", base(func(c *data.CallCreate) { c.Status, c.StartedAt, c.EndedAt = sp("ended"), &t0, &t1 }), ""},
		{"duration bounds", base(func(c *data.CallCreate) { c.Status, c.DurationMS = sp("failed"), new(int64) }), ""},
		{"duration over", base(func(c *data.CallCreate) {
			c.Status, c.DurationMS = sp("failed"), new(int64)
			*c.DurationMS = 86_400_001
		}), "duration_ms"},
		{"objects", base(func(c *data.CallCreate) {
			big := map[string]any{"x": strings.Repeat("b", 64<<10)}
			c.Variables, c.Analysis, c.Metadata = big, big, map[string]any{"ok": true}
		}), "analysis,variables"},
		{"recording", base(func(c *data.CallCreate) { c.RecordingURL = sp("file:///etc/passwd") }), "recording_url"},
		{"reason", base(func(c *data.CallCreate) { c.DisconnectionReason = sp(strings.Repeat("r", 101)) }), "disconnection_reason"},
	}
	for _, s := range data.CallStatuses {
		cases = append(cases, struct {
			name string
			in   data.CallCreate
			want string
		}{"status " + s, base(func(c *data.CallCreate) { c.Status = sp(s) }), ""})
	}
	for _, c := range cases {
		if got := fields(t, validate.CallCreate(c.in)); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if got := fields(t, validate.CallUpdate(data.CallUpdate{Status: data.Some("x"), DurationMS: data.Some(int64(-1)), RecordingURL: data.Some("nope")})); got != "duration_ms,recording_url,status" {
		t.Errorf("update: %q", got)
	}
}

func TestCallMoves(t *testing.T) {
	allowed := map[[2]string]bool{
		{"registered", "registered"}: true, {"registered", "ongoing"}: true, {"registered", "ended"}: true, {"registered", "failed"}: true,
		{"ongoing", "ongoing"}: true, {"ongoing", "ended"}: true, {"ongoing", "failed"}: true,
		{"ended", "ended"}: true, {"failed", "failed"}: true,
	}
	for _, from := range data.CallStatuses {
		for _, to := range data.CallStatuses {
			if got := data.CallMoveAllowed(from, to); got != allowed[[2]string{from, to}] {
				t.Errorf("%s → %s allowed = %v", from, to, got)
			}
		}
	}
}

func TestCallFilterQuery(t *testing.T) {
	q := url.Values{"agent_id": {"agt_01JD6ZZZZZZZZZZZZZZZZZZZZZ"}, "status": {"ended"}, "direction": {"web"},
		"from": {"2026-11-01T00:00:00+02:00"}, "to": {"2026-11-02T00:00:00Z"}}
	f, err := validate.CallFilter(q)
	if err != nil || f.Status != "ended" || !f.From.Equal(time.Date(2026, 10, 31, 22, 0, 0, 0, time.UTC)) {
		t.Fatalf("%+v %v", f, err)
	}
	bad := url.Values{"agent_id": {""}, "number_id": {"num"}, "status": {"x"}, "direction": {""}, "from": {"2026-11-01"}, "to": {"x"}}
	if got := fields(t, func() error { _, err := validate.CallFilter(bad); return err }()); got != "agent_id,direction,from,number_id,status,to" {
		t.Errorf("bad filter: %q", got)
	}
}

func TestAnalyticsQuery(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 4, 5, 123_456_789, time.UTC)
	q, err := validate.CallAnalytics(url.Values{}, now)
	if err != nil || q.Interval != "day" || !q.To.Equal(now.Truncate(time.Millisecond).Add(time.Millisecond)) || q.To.Sub(q.From) != 30*24*time.Hour {
		t.Fatalf("defaults: %+v %v", q, err)
	}
	at := func(s string) url.Values {
		return url.Values{"interval": {"hour"}, "from": {"2026-01-01T00:00:00Z"}, "to": {s}}
	}
	if _, err := validate.CallAnalytics(at("2026-03-25T08:00:00Z"), now); err != nil { // exactly 2,000 hours
		t.Errorf("2000 buckets: %v", err)
	}
	if got := fields(t, func() error { _, err := validate.CallAnalytics(at("2026-03-25T08:00:00.001Z"), now); return err }()); got != "to" {
		t.Errorf("2001 buckets: %q", got)
	}
	if n := validate.AnalyticsBuckets(time.Date(2026, 1, 1, 10, 30, 0, 0, time.UTC), time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC), time.Hour); n != 2 {
		t.Errorf("buckets = %d", n)
	}
	if got := fields(t, func() error { _, err := validate.CallAnalytics(url.Values{"interval": {"minute"}}, now); return err }()); got != "interval" {
		t.Errorf("interval: %q", got)
	}
}

// nested is an object nested levels deep ({"a": {"a": … {}}}): the object itself is the
// first level.
func nested(levels int) map[string]any {
	m := map[string]any{}
	for range levels - 1 {
		m = map[string]any{"a": m}
	}
	return m
}

// Variables, analysis and metadata nest at most MaxObjectDepth levels, arrays counting as
// objects do; a value thousands deep is refused as cheaply.
func TestCallObjectDepth(t *testing.T) {
	agent := "agt_01JD6ZZZZZZZZZZZZZZZZZZZZZ"
	inArray := map[string]any{"list": []any{nested(validate.MaxObjectDepth - 1)}} // 1 + the array + 31
	cases := []struct {
		name string
		obj  map[string]any
		want bool // refused
	}{
		{"flat", map[string]any{"a": 1}, false},
		{"at the bound", nested(validate.MaxObjectDepth), false},
		{"one past", nested(validate.MaxObjectDepth + 1), true},
		{"through an array, one past", inArray, true},
		{"3000 deep", nested(3000), true},
	}
	for _, c := range cases {
		want := ""
		if c.want {
			want = "analysis,metadata,variables"
		}
		in := data.CallCreate{AgentID: agent, Direction: "web", Variables: c.obj, Analysis: c.obj, Metadata: c.obj}
		if got := fields(t, validate.CallCreate(in)); got != want {
			t.Errorf("%s: %q, want %q", c.name, got, want)
		}
		up := data.CallUpdate{Variables: data.Some(c.obj), Analysis: data.Some(c.obj), Metadata: data.Some(c.obj)}
		if got := fields(t, validate.CallUpdate(up)); got != want {
			t.Errorf("%s (update): %q, want %q", c.name, got, want)
		}
	}
}

// A recording_url is an http or https URL of RFC 3986 characters, at most MaxURLLen.
func TestRecordingURL(t *testing.T) {
	long := "https://rec.example.com/" + strings.Repeat("a", validate.MaxURLLen-len("https://rec.example.com/"))
	cases := []struct {
		url string
		ok  bool
	}{
		{"https://rec.example.com/calls/1.wav", true},
		{"http://10.0.0.1:8080/r?id=1&sig=a%2Fb#t=3", true},
		{"https://rec.example.com/a%20b", true},
		{long, true},
		{long + "a", false},
		{"https://rec.example.com/a b", false},
		{"https://rec.example.com/<script>alert(1)</script>", false},
		{`https://rec.example.com/"onmouseover="x`, false},
		{"https://rec.example.com/a\tb", false},
		{"https://rec.example.com/%zz", false},
		{"https://rec.example.com/%2", false},
		{"https://rec.example.com/é", false},
		{"https://user:pw@rec.example.com/", false},
		{"ftp://rec.example.com/a", false},
		{"https:///a", false},
		{"javascript:alert(1)", false},
	}
	for _, c := range cases {
		got := fields(t, validate.CallUpdate(data.CallUpdate{RecordingURL: data.Some(c.url)}))
		if (got == "") != c.ok {
			t.Errorf("%.60q: %q, want accepted %v", c.url, got, c.ok)
		}
	}
}
