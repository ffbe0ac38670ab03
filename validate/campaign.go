package validate

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/phone"
)

// Bounds of campaigns, dial tasks and the suppression list (docs/campaigns.md).
const (
	// MaxCampaignName bounds a campaign's name.
	MaxCampaignName = 255
	// MaxOpenCampaigns bounds a workspace's campaigns not yet final (scheduled, running,
	// paused): every dial-task claim reads each of them.
	MaxOpenCampaigns = 100
	// MaxCampaignRecipients bounds the recipients one campaign is created with.
	MaxCampaignRecipients = 100_000
	// MaxKeptCampaignRecipients bounds the recipients a workspace's campaigns keep, each
	// campaign counting at least one (data.Campaign.KeptWeight): finished campaigns stay
	// until deleted or expired by retention, and a create past it is 409.
	MaxKeptCampaignRecipients = 1_000_000
	// MaxCampaignConcurrent bounds max_concurrent.
	MaxCampaignConcurrent = 1_000
	// MaxCampaignAttempts bounds retry.max_attempts.
	MaxCampaignAttempts = 10
	// MaxBackoffMinutes bounds retry.backoff_minutes (a week).
	MaxBackoffMinutes = 7 * 24 * 60
	// MaxDialClaim bounds the tasks one claim leases.
	MaxDialClaim = 100
	// MinDialLeaseSeconds and MaxDialLeaseSeconds bound a claim's lease_seconds.
	MinDialLeaseSeconds = 10
	MaxDialLeaseSeconds = 3_600
	// MaxRecipientVariables bounds the variables of one recipient (CSV columns too).
	MaxRecipientVariables = 50
	// MaxSuppressionImport bounds the rows of one suppression list import.
	MaxSuppressionImport = 100_000
	// MaxSuppressions bounds the numbers a workspace's suppression list holds, so that its
	// export always fits the import (docs/performance.md, "The suppression list at its bound").
	MaxSuppressions = 500_000
	// MaxSuppressionReason bounds a suppression's reason.
	MaxSuppressionReason = 255
)

// clock is "HH:MM" on a 24-hour clock.
var clock = regexp.MustCompile(`^([01]\d|2[0-3]):[0-5]\d$`)

// ClockMinutes is the minute of the day an "HH:MM" names.
func ClockMinutes(s string) int {
	h, _ := strconv.Atoi(s[:2])
	m, _ := strconv.Atoi(s[3:])
	return h*60 + m
}

// RecipientPath is where a recipient's errors are named: recipients.<index> for a JSON
// item, recipients.line_<n> for a CSV line.
func RecipientPath(r data.RecipientInput, index int) string {
	if r.Line > 0 {
		return "recipients.line_" + strconv.Itoa(r.Line)
	}
	return Index("recipients", index)
}

// CampaignCreate checks a campaign's body (conventions §25) and returns its recipients'
// numbers in E.164, read in region when written without a country (the caller id's
// region; "" accepts international numbers only). Whether the agent and number exist is
// the service's to say.
func CampaignCreate(in data.CampaignCreate, region string) ([]string, error) {
	var errs Errors
	campaignSettings(&errs, in)
	numbers := recipients(&errs, in.Recipients, region)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return numbers, nil
}

// CampaignSettings checks a campaign's settings alone, every rule of CampaignCreate but
// the recipients': for an upload whose file cannot be read as rows, so the settings'
// faults are told with the file's rather than after it is mended.
func CampaignSettings(in data.CampaignCreate) error {
	var errs Errors
	campaignSettings(&errs, in)
	return errs.Err()
}

// campaignSettings checks every member of a campaign but its recipients.
func campaignSettings(errs *Errors, in data.CampaignCreate) {
	errs.NotBlank("name", in.Name)
	errs.MaxLen("name", in.Name, MaxCampaignName)
	switch {
	case in.AgentID == "":
		errs.Required("agent_id")
	case !data.ValidID(data.PrefixAgent, in.AgentID):
		errs.Add("agent_id", "The agent_id field must be an agent of this workspace.")
	}
	switch {
	case in.NumberID == "":
		errs.Required("number_id")
	case !data.ValidID(data.PrefixNumber, in.NumberID):
		errs.Add("number_id", "The number_id field must be a number of this workspace.")
	}
	if in.Timezone != nil {
		Timezone(errs, "timezone", *in.Timezone)
	}
	if in.StartAt != nil {
		Timestamp(errs, "start_at", *in.StartAt)
	}
	if in.Window == nil {
		errs.Required("window")
	} else {
		window(errs, *in.Window)
	}
	if in.MaxConcurrent == nil {
		errs.Required("max_concurrent")
	} else {
		errs.IntBetween("max_concurrent", int64(*in.MaxConcurrent), 1, MaxCampaignConcurrent)
	}
	if in.Retry != nil {
		retry(errs, *in.Retry)
	}
}

// window checks days (known, each once, at least one) and start before end.
func window(errs *Errors, w data.CampaignWindow) {
	if len(w.Days) == 0 {
		errs.Add("window.days", "The window.days field must name at least one day (mon, tue, wed, thu, fri, sat, sun): a window on no day never opens.")
	}
	seen := map[string]bool{}
	for i, d := range w.Days {
		p := Index("window.days", i)
		if !slices.Contains(data.Weekdays, d) {
			errs.Addf(p, "The %s field must be one of mon, tue, wed, thu, fri, sat, sun.", p)
		} else if seen[d] {
			errs.Addf(p, "The %s field names %s again.", p, d)
		}
		seen[d] = true
	}
	okStart, okEnd := clock.MatchString(w.Start), clock.MatchString(w.End)
	if !okStart {
		errs.Add("window.start", "The window.start field must be a time of day as HH:MM (24-hour clock), such as 09:00.")
	}
	if !okEnd {
		errs.Add("window.end", "The window.end field must be a time of day as HH:MM (24-hour clock), such as 18:00.")
	}
	if okStart && okEnd && ClockMinutes(w.End) <= ClockMinutes(w.Start) {
		errs.Addf("window.end", "The window.end field must be after window.start (%s): the window would be empty. A window ends the day it starts.", w.Start)
	}
}

// retry checks the outcomes retried, the attempts and the backoff.
func retry(errs *Errors, r data.CampaignRetry) {
	seen := map[string]bool{}
	for i, o := range r.On {
		p := Index("retry.on", i)
		if !slices.Contains(data.RetryOutcomes, o) {
			errs.Addf(p, "The %s field must be one of no_answer, busy, voicemail, failed.", p)
		} else if seen[o] {
			errs.Addf(p, "The %s field names %s again.", p, o)
		}
		seen[o] = true
	}
	errs.IntBetween("retry.max_attempts", int64(r.MaxAttempts), 1, MaxCampaignAttempts)
	errs.IntBetween("retry.backoff_minutes", int64(r.BackoffMinutes), 1, MaxBackoffMinutes)
}

// recipients checks the list (1 to MaxCampaignRecipients) and each row: a number that
// normalizes, a known time zone, variables by the rules of a call's. It returns the
// rows' numbers in E.164.
func recipients(errs *Errors, rows []data.RecipientInput, region string) []string {
	switch {
	case len(rows) == 0:
		errs.Add("recipients", "The recipients field must list at least one recipient (as JSON, or a CSV file with a phone_number column).")
		return nil
	case len(rows) > MaxCampaignRecipients:
		errs.MaxItems("recipients", len(rows), MaxCampaignRecipients)
		return nil
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		p := RecipientPath(r, i)
		e164, ok := phone.Normalize(r.PhoneNumber, region)
		switch {
		case r.PhoneNumber == "" && r.Line == 0:
			errs.Required(p + ".phone_number")
		case !ok:
			errs.Add(p+".phone_number", rowMessage(r, i, phoneMessage(r.PhoneNumber, region)))
		}
		out[i] = e164
		if r.Timezone != nil && *r.Timezone != "" {
			var tz Errors
			Timezone(&tz, "timezone", *r.Timezone)
			if tz.Len() > 0 {
				errs.Add(p+".timezone", rowMessage(r, i, fmt.Sprintf("The timezone %q is not an IANA time zone name such as Europe/Paris or UTC.", *r.Timezone)))
			}
		}
		if len(r.Variables) > MaxRecipientVariables {
			errs.Add(p+".variables", rowMessage(r, i, fmt.Sprintf("A recipient may have at most %d variables.", MaxRecipientVariables)))
		} else if len(r.Variables) > 0 {
			Variables(errs, p+".variables", r.Variables)
		}
	}
	return out
}

// phoneMessage says why a number was refused.
func phoneMessage(raw, region string) string {
	if region == "" {
		return fmt.Sprintf("The phone number %q cannot be read as an E.164 number (write it with its country code, such as +14155550123).", raw)
	}
	return fmt.Sprintf("The phone number %q cannot be read as an E.164 number, nor as a national number of %s.", raw, region)
}

// rowMessage prefixes msg with the CSV line, when the row has one.
func rowMessage(r data.RecipientInput, i int, msg string) string {
	if r.Line > 0 {
		return fmt.Sprintf("Line %d: %s", r.Line, msg)
	}
	return fmt.Sprintf("Recipient %d: %s", i, msg)
}

// DialClaim checks a claim's body: max 1 to MaxDialClaim, lease_seconds within its bounds.
func DialClaim(in data.DialClaim) error {
	var errs Errors
	if in.Max == 0 {
		// 0 is what an omitted max decodes to: no claim asks for nothing.
		errs.Addf("max", "The max field is required: the most tasks to lease, 1 to %d.", MaxDialClaim)
	} else {
		errs.IntBetween("max", int64(in.Max), 1, MaxDialClaim)
	}
	if in.LeaseSeconds != nil {
		errs.IntBetween("lease_seconds", int64(*in.LeaseSeconds), MinDialLeaseSeconds, MaxDialLeaseSeconds)
	}
	return errs.Err()
}

// Suppressions checks suppression rows and returns their numbers in E.164. Rows of a CSV
// import are named rows.line_<n>; a single add names phone_number.
func Suppressions(rows []data.SuppressionCreate, region string, single bool) ([]string, error) {
	var errs Errors
	if !single {
		switch {
		case len(rows) == 0:
			// Named rows whichever form the list came in, as its bound is: a JSON body's
			// member, and the CSV's rows.
			errs.Add("rows", "The list is empty: send a CSV with at least one row under a phone_number column, or rows as JSON.")
		case len(rows) > MaxSuppressionImport:
			errs.MaxItems("rows", len(rows), MaxSuppressionImport)
		}
		if err := errs.Err(); err != nil {
			return nil, err
		}
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		p := ""
		switch {
		case single:
		case r.Line > 0:
			p = "rows.line_" + strconv.Itoa(r.Line) + "."
		default: // a JSON list's item
			p = Index("rows", i) + "."
		}
		e164, ok := phone.Normalize(r.PhoneNumber, region)
		switch {
		case r.PhoneNumber == "" && r.Line == 0:
			errs.Required(p + "phone_number")
		case !ok && errs.Full():
			errs.Omit(1) // counted without its message
		case !ok:
			msg := phoneMessage(r.PhoneNumber, region)
			if r.Line > 0 {
				msg = fmt.Sprintf("Line %d: %s", r.Line, msg)
			}
			errs.Add(p+"phone_number", msg)
		}
		out[i] = e164
		if r.Reason != nil {
			errs.MaxLen(p+"reason", *r.Reason, MaxSuppressionReason)
		}
	}
	return out, errs.Err()
}

// SuppressionRoom refuses, as a fault of path, an addition that would take a workspace's
// suppression list past max numbers (MaxSuppressions; only tests pass a lower one): listed
// are on it already, added are new to it. An addition of no new number passes whatever
// the list holds, so a list longer than the bound (made before there was one) keeps its
// numbers and refuses only new ones.
func SuppressionRoom(path string, listed, added, max int) error {
	if added == 0 || listed+added <= max {
		return nil
	}
	var errs Errors
	errs.Addf(path, "The suppression list holds at most %d numbers: it has %d, and the %d new here would make %d. Nothing was added; remove numbers from the list first.",
		max, listed, added, listed+added)
	return errs.Err()
}

// CampaignStatuses are the statuses a campaign list may filter on.
var CampaignStatuses = []string{data.CampaignScheduled, data.CampaignRunning, data.CampaignPaused, data.CampaignCompleted, data.CampaignCanceled}

// CampaignFilterParams reads the filters of GET /api/v1/campaigns, naming every bad
// parameter. A parameter given empty (?status=) is refused like any other bad value, as
// the call and job lists do: read as absent, it would widen the list unseen.
func CampaignFilterParams(q url.Values) (data.CampaignFilter, error) {
	var errs Errors
	f := data.CampaignFilter{
		AgentID: idParam(&errs, q, "agent_id", data.PrefixAgent, "an agent"),
		Status:  enumParam(&errs, q, "status", CampaignStatuses),
	}
	return f, errs.Err()
}

// CampaignFilter checks a campaign list's filters.
func CampaignFilter(f data.CampaignFilter) error {
	return agentStatusFilter(f.AgentID, f.Status, CampaignStatuses)
}

// RecipientFilterParams reads the filter of GET /api/v1/campaigns/{campaign_id}/recipients:
// state (the recipient's member), one of data.RecipientStates, given once (as every
// list's filter: docs/api.md).
func RecipientFilterParams(q url.Values) (data.RecipientFilter, error) {
	var errs Errors
	f := data.RecipientFilter{State: enumParam(&errs, q, "state", data.RecipientStates)}
	return f, errs.Err()
}

// RecipientFilter checks a recipient list's filter, from any caller.
func RecipientFilter(f data.RecipientFilter) error {
	var errs Errors
	if f.State != "" {
		errs.OneOf("state", f.State, data.RecipientStates...)
	}
	return errs.Err()
}
