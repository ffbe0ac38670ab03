package openapi

import (
	"fmt"
	"net/http"
	"reflect"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// campaignMultipart is the multipart form of a campaign created from a CSV file.
var campaignMultipart = map[string]any{
	"type":     "object",
	"required": []string{"campaign", "file"},
	"properties": map[string]any{
		"campaign": map[string]any{"type": "string", "contentMediaType": "application/json",
			"description": "The campaign's settings: the JSON body without recipients."},
		"file": map[string]any{"type": "string", "contentMediaType": "text/csv",
			"description": "A header line naming a phone_number column, an optional timezone column, and variable columns; one recipient a line. Errors name recipients.line_<n> (the header is line 1)."},
	},
}

// Campaigns, dial tasks and the suppression list (conventions §25, docs/campaigns.md).
func init() {
	const tag = "Campaign"
	tagNames = append(tagNames, tag)
	campaignFilters := []queryParam{
		{"agent_id", "Only this agent's campaigns.", map[string]any{"type": "string"}},
		{"status", "Only campaigns in this status.", map[string]any{"type": "string", "enum": validate.CampaignStatuses}},
	}
	opDocs["GET /api/v1/campaigns"] = opDoc{Tag: tag, Summary: "List campaigns", Out: data.Campaign{}, Shape: shapeList, Query: campaignFilters,
		Description: "Campaigns of the agents the caller may see, newest first."}
	opDocs["POST /api/v1/campaigns"] = opDoc{Tag: tag, Summary: "Create a campaign: recipients as JSON or a CSV upload",
		Description: "Numbers are normalized to E.164 (a national number is read in the country of number_id's number); rows naming one number " +
			"merge; numbers on the suppression list are skipped and counted. Errors name rows: recipients.<index>.<field>, or recipients.line_<n> " +
			"for a CSV. 422 on agent_id for an agent with no published version, on recipients.variables.<name> when a variable the agent uses is " +
			"given nowhere. Nothing is stored from a refused request; an upload over the file limit is 413. A retry under an Idempotency-Key is 404 " +
			"when the caller no longer sees the campaign's agent (docs/api.md). " + fmt.Sprintf("409 conflict when the workspace has %d open campaigns "+
			"(scheduled, running or paused), the most it may have, ", validate.MaxOpenCampaigns) + fmt.Sprintf("and when the workspace's campaigns "+
			"would keep more than %d recipients (each campaign counting at least one): delete finished ones, or set privacy.retention_days. ", validate.MaxKeptCampaignRecipients) + "See docs/campaigns.md.",
		Body: data.CampaignCreate{}, BodyRequired: true, Multipart: campaignMultipart, Out: data.Campaign{}, Status: http.StatusCreated,
		Errors: []int{http.StatusNotFound, http.StatusConflict, http.StatusRequestEntityTooLarge}}
	opDocs["GET /api/v1/campaigns/{campaign_id}"] = opDoc{Tag: tag, Summary: "Show a campaign with its counts", Out: data.Campaign{}}
	opDocs["DELETE /api/v1/campaigns/{campaign_id}"] = opDoc{Tag: tag, Summary: "Delete a finished campaign with its recipients",
		Description: "A completed or canceled campaign goes at once, with its recipients (their numbers and variables); the calls it made stay, " +
			"call history under its own retention. 409 conflict for a scheduled, running or paused campaign (cancel it first) and for a canceled " +
			"one whose calls are still in progress (until they end). Event campaign.deleted. Finished campaigns also expire with " +
			"privacy.retention_days; see docs/campaigns.md.",
		Shape: shapeNone, Errors: []int{http.StatusConflict}}
	opDocs["GET /api/v1/campaigns/{campaign_id}/recipients"] = opDoc{Tag: tag, Summary: "List a campaign's recipients with their attempts",
		Description: "Newest first. state filters on the state shown (a canceled campaign's pending recipients read canceled); a filtered " +
			"page reads per_page recipients whatever the campaign's size. A cursor is bound to its filter: reused under another it is 422 " +
			"on cursor. See docs/campaigns.md.",
		Query: []queryParam{enumParam("state", "Only recipients in this state.", data.RecipientStates...)},
		Out:   data.Recipient{}, Shape: shapeList}
	for _, m := range []struct{ verb, summary, more string }{
		{"pause", "Pause a campaign: no task is leased; calls in progress run on", ""},
		{"resume", "Resume a paused campaign", " A campaign that paused itself (pause_reason) is also 409 while its reason still holds, " +
			"the message saying what fixes it; a resume clears pause_reason."},
		{"cancel", "Cancel a campaign: nothing more is dialed; calls in progress are recorded without retries", ""},
	} {
		opDocs["POST /api/v1/campaigns/{campaign_id}/"+m.verb] = opDoc{Tag: tag, Summary: m.summary, Out: data.Campaign{},
			Description: "409 conflict when the campaign's status does not allow it." + m.more, Errors: []int{http.StatusConflict}}
	}
	opDocs["POST /api/v1/dial-tasks/claim"] = opDoc{Tag: tag, Summary: "Lease due dial tasks, each with its call-start answer (the voice runtime)",
		Description: "Returns leases whose time ran out, then leases up to max due recipients (in their window, under their campaign's max_concurrent " +
			"and the concurrency limits, attempts left, not suppressed), registering each one's call as POST /api/v1/calls/start does, in one " +
			"transaction. At the month's call_minutes_per_month limit it leases nothing (200, no tasks) yet still returns leases whose time ran out, " +
			"and a running campaign that cannot dial for a lasting reason (those minutes, its agent unpublished or gone) pauses itself with its pause_reason and campaign.paused. Report the call with PUT /api/v1/calls/{call_id}: ongoing keeps the task for the call's length; its end (status, " +
			"disconnection_reason) completes the recipient or schedules its retry. A task whose call is not reported started within the lease " +
			"is given back (the call fails with dial_lease_expired). Each attempt is handed out once, on any number of replicas.",
		Body: data.DialClaim{}, BodyRequired: true, Out: data.DialClaimAnswer{}, Shape: shapeData}
	opDocs["GET /api/v1/suppressions"] = opDoc{Tag: tag, Summary: "List the workspace's suppression list", Out: data.Suppression{}, Shape: shapeList}
	opDocs["POST /api/v1/suppressions"] = opDoc{Tag: tag, Summary: "Add a number to the suppression list: it is never dialed again",
		Description: fmt.Sprintf("201 with the new entry; 200 with the stored one when the number is listed already. A list holds at most %d numbers: "+
			"a new number past that is 422 naming phone_number.", validate.MaxSuppressions),
		Body: data.SuppressionCreate{}, BodyRequired: true, Out: data.Suppression{}, Status: http.StatusCreated,
		AlsoSuccess: map[int]string{http.StatusOK: "The number was listed already: the stored entry."}}
	opDocs["POST /api/v1/suppressions/import"] = opDoc{Tag: tag, Summary: "Import a CSV into the suppression list (every row or none)",
		Description: "Send text/csv, or a multipart file part: a phone_number column (E.164 numbers) and an optional reason column; or JSON " +
			"{rows: [{phone_number, reason?}]}. Errors name rows.line_<n>.phone_number (rows.<i>.phone_number for JSON). 413 over the file limit. " +
			fmt.Sprintf("A list holds at most %d numbers: an import whose new numbers would take it past that is 422 naming rows, with none added.", validate.MaxSuppressions),
		Body: data.SuppressionRows{}, BodyRequired: true,
		Multipart: map[string]any{"type": "object", "required": []string{"file"}, "properties": map[string]any{
			"file": map[string]any{"type": "string", "contentMediaType": "text/csv"}}},
		Out: data.SuppressionImport{}, Shape: shapeData, Errors: []int{http.StatusRequestEntityTooLarge}}
	opDocs["DELETE /api/v1/suppressions/{suppression_id}"] = opDoc{Tag: tag, Summary: "Remove a number from the suppression list",
		Description: "403 for a caller limited to some agents: the number would be callable by every agent again.", Shape: shapeNone}

	for _, t := range []string{data.EventCampaignCreated, data.EventCampaignStarted, data.EventCampaignPaused, data.EventCampaignResumed,
		data.EventCampaignCanceled, data.EventCampaignCompleted, data.EventCampaignDeleted} {
		eventPayloads[t] = data.Campaign{}
	}

	window := map[string]fieldRule{
		"days":  fieldRule{MinItems: 1, MaxItems: 7, UniqueItems: true, Items: &fieldRule{Enum: data.Weekdays}}.with(true, "The days the window opens, in the recipient's time zone."),
		"start": fieldRule{Pattern: clockPattern}.with(true, "HH:MM, 24-hour clock, inclusive."),
		"end":   fieldRule{Pattern: clockPattern}.with(true, "HH:MM, exclusive; after start (a window ends the day it starts)."),
	}
	fieldRules["CampaignWindow"] = window
	fieldRules["CampaignRetry"] = map[string]fieldRule{
		"on":              fieldRule{UniqueItems: true, Items: &fieldRule{Enum: data.RetryOutcomes}}.with(true, "The outcomes tried again; the others complete the recipient."),
		"max_attempts":    between(1, validate.MaxCampaignAttempts).with(true, "Attempts a recipient gets in all."),
		"backoff_minutes": between(1, validate.MaxBackoffMinutes).with(true, "Wait after a retried outcome; then the window's next opening."),
	}
	fieldRules["CampaignCreate"] = map[string]fieldRule{
		"name":           fieldRule{MinLength: 1, MaxLength: validate.MaxCampaignName}.with(true, "Not blank."),
		"agent_id":       fieldRule{}.with(true, "A published agent of the workspace: the campaign belongs to it."),
		"number_id":      fieldRule{}.with(true, "The workspace's number that calls (the caller id)."),
		"timezone":       {Description: "IANA time zone of recipients without one; UTC when absent."},
		"window":         fieldRule{}.with(true, ""),
		"max_concurrent": between(1, validate.MaxCampaignConcurrent).with(true, "Calls of this campaign in progress at once."),
		"retry":          {Description: "Absent: no_answer and busy, 3 attempts, 60 minutes apart."},
		"start_at":       {Description: "When dialing may begin; now when absent."},
		"recipients": fieldRule{MinItems: 1, MaxItems: validate.MaxCampaignRecipients}.with(true,
			"At least one. A multipart upload's recipients come from its CSV file instead: its campaign part must not list them."),
	}
	// data.RecipientInput's own name would read as the input form of Recipient.
	schemaNames[reflect.TypeFor[data.RecipientInput]()] = "RecipientRow"
	fieldRules["RecipientRow"] = map[string]fieldRule{
		"phone_number": fieldRule{}.with(true, "E.164, or a national number of the caller id's country."),
		"timezone":     {Description: "IANA time zone; the campaign's when absent."},
		"variables":    variablesUpTo(validate.MaxRecipientVariables),
	}
	fieldRules["DialClaim"] = map[string]fieldRule{
		"max":           between(1, validate.MaxDialClaim).with(true, "Tasks to lease at most."),
		"lease_seconds": between(validate.MinDialLeaseSeconds, validate.MaxDialLeaseSeconds).with(false, fmt.Sprintf("How long a task waits for its call to be reported started; %d when absent.", int(data.DefaultDialLease.Seconds()))),
	}
	fieldRules["DialClaimAnswer"] = map[string]fieldRule{
		"tasks":       {NotNull: true},
		"next_due_at": {Description: "When the next waiting recipient falls due; null when none waits for a time."},
	}
	fieldRules["DialTask"] = map[string]fieldRule{
		"call":    {Description: "The call registered for this attempt: report it with PUT /api/v1/calls/{call_id}."},
		"agent":   {Description: "The configuration to run, as POST /api/v1/calls/start answers it (credentials in clear)."},
		"variant": {Description: "The version that runs and why."},
	}
	fieldRules["CampaignCounts"] = map[string]fieldRule{
		"completed": {NotNull: true, Description: "Completed recipients by outcome ({} until one completes)."},
	}
	fieldRules["Campaign"] = map[string]fieldRule{
		"status": oneOf(validate.CampaignStatuses...),
		"pause_reason": oneOf(data.CampaignPauseReasons...).with(false, "Why the campaign paused itself: a lasting condition under which it cannot dial "+
			"(call_minutes_used_up: the month's call minutes; agent_not_published; agent_unavailable: its agent is no longer the workspace's), "+
			"told by campaign.paused with actor system. Resume it once fixed (a resume while the condition holds is 409). Null when not paused, or paused by a user."),
		"counts": {Description: "Recipients by state; completed ones by outcome."},
		"import": {Description: "What the create made of the rows it was given."},
	}
	fieldRules["Recipient"] = map[string]fieldRule{
		"state":   oneOf(data.RecipientPending, data.RecipientInProgress, data.RecipientCompleted, data.RecipientSuppressed, data.RecipientExhausted, data.RecipientCanceled),
		"line":    {Description: "The CSV line, or the index in the JSON list, of the recipient's first row."},
		"next_at": {Description: "When a pending recipient is next due."},
	}
	fieldRules["SuppressionRows"] = map[string]fieldRule{
		"rows": fieldRule{}.with(true, fmt.Sprintf("At least one, at most %d.", validate.MaxSuppressionImport)),
	}
	fieldRules["SuppressionCreate"] = map[string]fieldRule{
		"phone_number": fieldRule{}.with(true, "E.164, with its country code."),
		"reason":       maxLen(validate.MaxSuppressionReason),
	}
	typeDocs["Campaign"] = "An outbound batch (conventions §25): the agent that calls, the number it calls from, when and how often, and where its recipients stand."
	typeDocs["Recipient"] = "One number a campaign calls, with its variables and its attempts (each with its call)."
	typeDocs["DialTask"] = "One leased attempt: the number to dial and its call-start answer."
	typeDocs["Suppression"] = "A number the workspace never dials."
}

// clockPattern is a time of day, HH:MM on a 24-hour clock.
const clockPattern = `^([01]\d|2[0-3]):[0-5]\d$`
