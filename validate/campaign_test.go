package validate_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

func campaignIn(change func(*data.CampaignCreate)) data.CampaignCreate {
	mc := 5
	in := data.CampaignCreate{Name: "Reminders", AgentID: "agt_01JD6ZZZZZZZZZZZZZZZZZZZZZ", NumberID: "num_01JD6ZZZZZZZZZZZZZZZZZZZZZ",
		Window:        &data.CampaignWindow{Days: []string{"mon"}, Start: "09:00", End: "18:00"},
		MaxConcurrent: &mc, Retry: &data.CampaignRetry{On: []string{"busy"}, MaxAttempts: 3, BackoffMinutes: 60},
		Recipients: []data.RecipientInput{{PhoneNumber: "+14155550101"}}}
	if change != nil {
		change(&in)
	}
	return in
}

func rows(n int) []data.RecipientInput {
	out := make([]data.RecipientInput, n)
	for i := range out {
		out[i] = data.RecipientInput{PhoneNumber: fmt.Sprintf("+1415%07d", 2_000_000+i)}
	}
	return out
}

func vars(n int) map[string]any {
	out := map[string]any{}
	for i := range n {
		out[fmt.Sprintf("v%d", i)] = "x"
	}
	return out
}

// Every bound of a campaign at its edge (accepted) and just past it (refused, naming the
// field).
func TestCampaignCreateBounds(t *testing.T) {
	intp := func(n int) *int { return &n }
	cases := []struct {
		name   string
		change func(*data.CampaignCreate)
		field  string // "" when accepted
	}{
		{"valid", nil, ""},
		{"name at its bound", func(c *data.CampaignCreate) { c.Name = strings.Repeat("n", validate.MaxCampaignName) }, ""},
		{"name past it", func(c *data.CampaignCreate) { c.Name = strings.Repeat("n", validate.MaxCampaignName+1) }, "name"},
		{"blank name", func(c *data.CampaignCreate) { c.Name = " " }, "name"},
		{"max_concurrent 1", func(c *data.CampaignCreate) { c.MaxConcurrent = intp(1) }, ""},
		{"max_concurrent 0", func(c *data.CampaignCreate) { c.MaxConcurrent = intp(0) }, "max_concurrent"},
		{"max_concurrent at its bound", func(c *data.CampaignCreate) { c.MaxConcurrent = intp(validate.MaxCampaignConcurrent) }, ""},
		{"max_concurrent past it", func(c *data.CampaignCreate) { c.MaxConcurrent = intp(validate.MaxCampaignConcurrent + 1) }, "max_concurrent"},
		{"no max_concurrent", func(c *data.CampaignCreate) { c.MaxConcurrent = nil }, "max_concurrent"},
		{"max_attempts 1", func(c *data.CampaignCreate) { c.Retry.MaxAttempts = 1 }, ""},
		{"max_attempts 0", func(c *data.CampaignCreate) { c.Retry.MaxAttempts = 0 }, "retry.max_attempts"},
		{"max_attempts at its bound", func(c *data.CampaignCreate) { c.Retry.MaxAttempts = validate.MaxCampaignAttempts }, ""},
		{"max_attempts past it", func(c *data.CampaignCreate) { c.Retry.MaxAttempts = validate.MaxCampaignAttempts + 1 }, "retry.max_attempts"},
		{"backoff 1", func(c *data.CampaignCreate) { c.Retry.BackoffMinutes = 1 }, ""},
		{"backoff 0", func(c *data.CampaignCreate) { c.Retry.BackoffMinutes = 0 }, "retry.backoff_minutes"},
		{"backoff at its bound", func(c *data.CampaignCreate) { c.Retry.BackoffMinutes = validate.MaxBackoffMinutes }, ""},
		{"backoff past it", func(c *data.CampaignCreate) { c.Retry.BackoffMinutes = validate.MaxBackoffMinutes + 1 }, "retry.backoff_minutes"},
		{"an outcome twice", func(c *data.CampaignCreate) { c.Retry.On = []string{"busy", "busy"} }, "retry.on.1"},
		{"answered retried", func(c *data.CampaignCreate) { c.Retry.On = []string{"answered"} }, "retry.on.0"},
		{"a window of one minute", func(c *data.CampaignCreate) { c.Window.Start, c.Window.End = "09:00", "09:01" }, ""},
		{"an empty window", func(c *data.CampaignCreate) { c.Window.Start, c.Window.End = "09:00", "09:00" }, "window.end"},
		{"a window ending before it starts", func(c *data.CampaignCreate) { c.Window.Start, c.Window.End = "18:00", "09:00" }, "window.end"},
		{"23:59 closes", func(c *data.CampaignCreate) { c.Window.Start, c.Window.End = "00:00", "23:59" }, ""},
		{"24:00 is no time", func(c *data.CampaignCreate) { c.Window.End = "24:00" }, "window.end"},
		{"9:00 is not HH:MM", func(c *data.CampaignCreate) { c.Window.Start = "9:00" }, "window.start"},
		{"no days", func(c *data.CampaignCreate) { c.Window.Days = nil }, "window.days"},
		{"an unknown day", func(c *data.CampaignCreate) { c.Window.Days = []string{"monday"} }, "window.days.0"},
		{"a day twice", func(c *data.CampaignCreate) { c.Window.Days = []string{"mon", "mon"} }, "window.days.1"},
		{"no window", func(c *data.CampaignCreate) { c.Window = nil }, "window"},
		{"an unknown time zone", func(c *data.CampaignCreate) { tz := "Mars/Olympus"; c.Timezone = &tz }, "timezone"},
		{"a bad agent id", func(c *data.CampaignCreate) { c.AgentID = "nope" }, "agent_id"},
		{"a bad number id", func(c *data.CampaignCreate) { c.NumberID = "" }, "number_id"},
		{"no recipients", func(c *data.CampaignCreate) { c.Recipients = nil }, "recipients"},
		{"recipients at their bound", func(c *data.CampaignCreate) { c.Recipients = rows(validate.MaxCampaignRecipients) }, ""},
		{"recipients past it", func(c *data.CampaignCreate) { c.Recipients = rows(validate.MaxCampaignRecipients + 1) }, "recipients"},
		{"a number that cannot be normalized", func(c *data.CampaignCreate) { c.Recipients[0].PhoneNumber = "+1415" }, "recipients.0.phone_number"},
		{"a CSV line's number", func(c *data.CampaignCreate) { c.Recipients[0].PhoneNumber, c.Recipients[0].Line = "x", 7 }, "recipients.line_7.phone_number"},
		{"a recipient's unknown time zone", func(c *data.CampaignCreate) { tz := "Nowhere"; c.Recipients[0].Timezone = &tz }, "recipients.0.timezone"},
		{"variables at their bound", func(c *data.CampaignCreate) { c.Recipients[0].Variables = vars(validate.MaxRecipientVariables) }, ""},
		{"variables past it", func(c *data.CampaignCreate) { c.Recipients[0].Variables = vars(validate.MaxRecipientVariables + 1) }, "recipients.0.variables"},
		{"a bad variable name", func(c *data.CampaignCreate) { c.Recipients[0].Variables = map[string]any{"a b": "x"} }, "recipients.0.variables.a b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := validate.CampaignCreate(campaignIn(c.change), "")
			checkField(t, err, c.field)
		})
	}
}

// checkField fails unless err is nil (field "") or a 422 naming field.
func checkField(t *testing.T, err error, field string) {
	t.Helper()
	if field == "" {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	e, ok := err.(*data.Error)
	if !ok || e.Code != data.EINVALID || e.Fields[field] == nil {
		t.Fatalf("want a 422 naming %s, got %v", field, err)
	}
}

// A national number (and an international prefix: 011 in the US) is read in the caller
// id's region, and only there.
func TestCampaignNumbersNormalized(t *testing.T) {
	in := campaignIn(func(c *data.CampaignCreate) {
		c.Recipients = []data.RecipientInput{{PhoneNumber: "(415) 555-0101"}, {PhoneNumber: "+44 20 7946 0018"}, {PhoneNumber: "011 44 20 7946 0018"}}
	})
	got, err := validate.CampaignCreate(in, "US")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"+14155550101", "+442079460018", "+442079460018"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("normalized %v, want %v", got, want)
	}
	_, err = validate.CampaignCreate(in, "")
	checkField(t, err, "recipients.0.phone_number")
}

func TestDialClaimBounds(t *testing.T) {
	intp := func(n int) *int { return &n }
	cases := []struct {
		in    data.DialClaim
		field string
	}{
		{data.DialClaim{Max: 1}, ""},
		{data.DialClaim{Max: 0}, "max"},
		{data.DialClaim{Max: validate.MaxDialClaim}, ""},
		{data.DialClaim{Max: validate.MaxDialClaim + 1}, "max"},
		{data.DialClaim{Max: 1, LeaseSeconds: intp(validate.MinDialLeaseSeconds)}, ""},
		{data.DialClaim{Max: 1, LeaseSeconds: intp(validate.MinDialLeaseSeconds - 1)}, "lease_seconds"},
		{data.DialClaim{Max: 1, LeaseSeconds: intp(validate.MaxDialLeaseSeconds)}, ""},
		{data.DialClaim{Max: 1, LeaseSeconds: intp(validate.MaxDialLeaseSeconds + 1)}, "lease_seconds"},
	}
	for _, c := range cases {
		checkField(t, validate.DialClaim(c.in), c.field)
	}
}

func TestSuppressionBounds(t *testing.T) {
	r := func(n int) *string { s := strings.Repeat("r", n); return &s }
	checkField(t, second(validate.Suppressions([]data.SuppressionCreate{{PhoneNumber: "+14155550101", Reason: r(validate.MaxSuppressionReason)}}, "", true)), "")
	checkField(t, second(validate.Suppressions([]data.SuppressionCreate{{PhoneNumber: "+14155550101", Reason: r(validate.MaxSuppressionReason + 1)}}, "", true)), "reason")
	checkField(t, second(validate.Suppressions([]data.SuppressionCreate{{PhoneNumber: "4155550101"}}, "", true)), "phone_number")
	checkField(t, second(validate.Suppressions([]data.SuppressionCreate{{PhoneNumber: "+14155550101", Line: 2}, {PhoneNumber: "x", Line: 3}}, "", false)), "rows.line_3.phone_number")
	checkField(t, second(validate.Suppressions(nil, "", false)), "rows")
}

func second(_ []string, err error) error { return err }

// An addition fits the suppression list up to MaxSuppressions numbers and is refused one
// past it, naming the field and saying the bound and what the list holds; an addition of
// no new number passes even a list already past the bound (one made before it).
func TestSuppressionRoom(t *testing.T) {
	max := validate.MaxSuppressions
	cases := []struct {
		listed, added int
		field         string
	}{
		{0, max, ""},
		{0, max + 1, "suppressions"},
		{max - 1, 1, ""},
		{max, 1, "suppressions"},
		{max - 10, 10, ""},
		{max - 10, 11, "suppressions"},
		{max, 0, ""},
		{max + 5, 0, ""},
		{max + 5, 1, "suppressions"},
	}
	for _, c := range cases {
		err := validate.SuppressionRoom("suppressions", c.listed, c.added, max)
		checkField(t, err, c.field)
		if c.field == "" {
			continue
		}
		msg := err.(*data.Error).Fields[c.field][0]
		for _, want := range []string{strconv.Itoa(max), "has " + strconv.Itoa(c.listed), strconv.Itoa(c.listed + c.added)} {
			if !strings.Contains(msg, want) {
				t.Errorf("listed %d, added %d: %q does not say %s", c.listed, c.added, msg, want)
			}
		}
	}
}
