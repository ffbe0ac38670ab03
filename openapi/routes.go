package openapi

import (
	"net/http"
	"strconv"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// shape is how a handler writes its successful response.
type shape int

const (
	shapeRecord shape = iota // writeRecord: {"data": record, ...extra} with an ETag
	shapeList                // writeList: {"data": [...], "meta": page}
	shapeData                // writeJSON: {"data": value}, no ETag
	shapeNone                // 204, no body
	shapeRaw                 // a body of its own (Out), or a non-JSON media type
)

// opDoc describes one route for the OpenAPI document. What the route table already says
// (public or not, what it needs of the caller, idempotency) is not repeated here: the
// generator reads it from the route.
type opDoc struct {
	Summary     string
	Description string
	Tag         string
	// Body is a zero value of the request body type; nil when the route reads none.
	Body any
	// BodyRequired is set when an empty body is refused (most bodies may be empty: the
	// rules then name what is missing).
	BodyRequired bool
	// Out is a zero value of the record (or, for shapeRaw JSON, of the whole body).
	Out    any
	Shape  shape
	Status int
	// Extra names top-level string members beside data (token, secret) and says what they are.
	Extra map[string]string
	// ExtraOut are top-level members beside data of other types: a zero value of each.
	ExtraOut map[string]any
	// Media is the response's media type when it is not JSON.
	Media string
	// AltMedia are other media types the same response may have (a format parameter, a
	// stream asked for by Accept, a range such as */* for whatever a stored file is).
	AltMedia []string
	// Example is an example body of that media type.
	Example string
	// Query are the route's query parameters beyond per_page and cursor.
	Query []queryParam
	// Headers are request headers the route reads beyond the common ones.
	Headers []queryParam
	// Errors are statuses the route can answer beyond those the generator derives.
	Errors []int
	// IfMatch marks a POST that honours If-Match (PUT and DELETE always do).
	IfMatch bool
	// Others are responses other than the success and the errors, by status.
	Others map[int]string
	// AlsoSuccess are other statuses answered with the success's body and headers, with
	// their descriptions (an add that finds the record there already: 200 with it).
	AlsoSuccess map[int]string
	// Multipart is the schema of a multipart/form-data body the route accepts as well as
	// its JSON Body.
	Multipart map[string]any
}

// queryParam is one query parameter of a route.
type queryParam struct {
	Name        string
	Description string
	Schema      map[string]any
}

func strParam(name, desc string) queryParam {
	return queryParam{name, desc, map[string]any{"type": "string"}}
}

func enumParam(name, desc string, values ...string) queryParam {
	enum := make([]any, len(values))
	for i, v := range values {
		enum[i] = v
	}
	return queryParam{name, desc, map[string]any{"type": "string", "enum": enum}}
}

func timeParam(name, desc string) queryParam {
	return queryParam{name, desc + " RFC 3339 timestamp.", map[string]any{"type": "string", "format": "date-time"}}
}

// agentCreateBody documents the body of POST /api/v1/agents (data.AgentCreate, merged
// into the defaults).
type agentCreateBody struct {
	Name string `json:"name"`
	agentGroupsBody
	agentPolicyBody
}

// agentUpdateBody documents the body of PUT /api/v1/agents/{agent_id}.
type agentUpdateBody struct {
	Name data.Opt[string] `json:"name"`
	agentGroupsBody
	agentPolicyBody
}

// agentPolicyBody are the members of an agent body that are policy, no part of a version.
type agentPolicyBody struct {
	MaxConcurrentCalls data.Opt[*int] `json:"max_concurrent_calls"`
}

// agentGroupsBody are the seven groups of an agent body, each optional and not nullable.
type agentGroupsBody struct {
	CallConfig          data.Opt[data.CallConfig]          `json:"call_config"`
	KnowledgeBaseConfig data.Opt[data.KnowledgeBaseConfig] `json:"knowledge_base_config"`
	LLMConfig           data.Opt[data.LLMConfig]           `json:"llm_config"`
	PromptConfig        data.Opt[data.PromptConfig]        `json:"prompt_config"`
	STTConfig           data.Opt[data.STTConfig]           `json:"stt_config"`
	TTSConfig           data.Opt[data.TTSConfig]           `json:"tts_config"`
	AnalysisConfig      data.Opt[data.AnalysisConfig]      `json:"analysis_config"`
}

// healthBody is what /healthz and /readyz answer.
type healthBody struct {
	Status string `json:"status"`
}

// replayResult is the data of a webhook replay.
type replayResult struct {
	Count int       `json:"count"`
	From  data.Time `json:"from"`
	To    data.Time `json:"to"`
}

var (
	callFilters = []queryParam{
		strParam("agent_id", "Only calls of this agent."),
		strParam("number_id", "Only calls of this number."),
		enumParam("direction", "Only calls of this direction.", data.CallDirections...),
		enumParam("status", "Only calls in this status.", data.CallStatuses...),
		timeParam("from", "Calls created at or after this time."),
		timeParam("to", "Calls created before this time."),
	}
	analyticsQuery = []queryParam{
		timeParam("from", "Start of the range (inclusive); 30 days before to by default."),
		timeParam("to", "End of the range (exclusive); now by default."),
		strParam("agent_id", "Only calls of this agent."),
		enumParam("interval", "Bucket width; day by default.", data.IntervalHour, data.IntervalDay),
		// agent_version is appended with the per-version figures (call_start.go).
	}
	analysisQuery = []queryParam{
		strParam("agent_id", "The agent (required)."),
		strParam("field", "A field of the agent's analysis_config.fields, or call_successful (required)."),
		{"agent_version", "Only calls of this agent version; the field's type is that version's.", map[string]any{"type": "integer", "minimum": 1}},
		timeParam("from", "Start of the range (inclusive); 30 days before to by default."),
		timeParam("to", "End of the range (exclusive); now by default."),
		enumParam("interval", "Bucket width; day by default.", data.IntervalHour, data.IntervalDay),
	}
	auditFilters = []queryParam{
		enumParam("type", "Only events of this type.", data.EventTypes...),
		strParam("actor", "Only events by this user id."),
		timeParam("from", "Events at or after this time."),
		timeParam("to", "Events before this time."),
	}
)

// chainNeed is who reads the audit chain's head and verification (data.NeedAuditChain).
const chainNeed = "It describes every event, so it needs a token that reads every event: an owner or admin seeing every agent and, on a key with scopes, audit:read and every module's read scope; 403 otherwise."

// opDocs describes every route, keyed by method and path template as in the route table.
// A route added without an entry here fails TestOpenAPICoversEveryRoute.
var opDocs = map[string]opDoc{
	// Operations.
	"GET /api/v1/audit-log/verify": {Tag: "Audit Log", Summary: "Verify the audit chain of the workspace",
		Description: "Recomputes every link of the current workspace's chain under the instance's key and names each fault, as voiceapi audit verify does on a stopped server. " +
			chainNeed,
		Out: data.AuditVerification{}, Shape: shapeData},
	"GET /api/v1/audit-log/head": {Tag: "Audit Log", Summary: "The newest link of the audit chain",
		Description: "Record the hash elsewhere (a ticket, a log shipper): a later chain that does not lead to it was rewritten, even by someone who holds the instance's key. " +
			chainNeed,
		Out: data.AuditHead{}, Shape: shapeData},
	"GET /api/v1/jobs/{job_id}": {Tag: "Jobs", Summary: "Show a background job",
		Description: "A durable background job of the current workspace (fetching a knowledge base's URL source, or the work behind a 202 that names its job): its status, attempt, progress, last error and times. Readable by those who hold the module its kind belongs to (knowledge_base for knowledge_base.* jobs) and may see its agent; not_found otherwise. See docs/jobs.md.",
		Out:         data.Job{}},
	"GET /healthz": {Tag: "Operations", Summary: "Liveness: the process is up", Out: healthBody{}, Shape: shapeRaw},
	"GET /readyz":  {Tag: "Operations", Summary: "Readiness: the database answers and is not newer than this replica", Out: healthBody{}, Shape: shapeRaw, Errors: []int{http.StatusServiceUnavailable}},
	"GET /metrics": {Tag: "Operations", Summary: "Prometheus metrics (instance admins)", Shape: shapeRaw, Media: "text/plain; version=0.0.4"},
	"GET /api/v1/openapi.json": {Tag: "Operations", Summary: "This OpenAPI document",
		Description: "Public: the document describes the API, not any data. Built once per process; send its ETag in If-None-Match to get 304.",
		Shape:       shapeRaw, Media: "application/json", Others: map[int]string{http.StatusNotModified: "Not modified: the ETag in If-None-Match is current."}},
	"GET /api/v1/admin/backup": {Tag: "Operations", Summary: "Stream an online backup (instance admins)",
		Description: "A tar.gz of a consistent database snapshot, the stored files and, unless exclude_secret_key=true, the secret key; taken while the server keeps serving.",
		Shape:       shapeRaw, Media: "application/gzip", Errors: []int{http.StatusNotFound},
		Query: []queryParam{{"exclude_secret_key", "Leave the secret key out of the archive.", map[string]any{"type": "boolean"}}}},

	// Authentication and API keys.
	"POST /api/v1/auth/login": {Tag: "Authentication", Summary: "Log in: a token for an email and password",
		Description: "Unknown email, wrong password and a workspace the user is not a member of all give the same 422 on email.",
		Body:        data.LoginRequest{}, BodyRequired: true, Out: data.APIKey{}, Status: http.StatusOK,
		Extra:  map[string]string{"token": "The token, `<key id>|<secret>`; shown once."},
		Errors: []int{http.StatusTooManyRequests, http.StatusServiceUnavailable}},
	"POST /api/v1/auth/logout": {Tag: "Authentication", Summary: "Revoke the calling token", Shape: shapeNone},
	"GET /api/v1/api-keys":     {Tag: "API Keys", Summary: "List the caller's API keys", Out: data.APIKey{}, Shape: shapeList},
	"POST /api/v1/api-keys": {Tag: "API Keys", Summary: "Create an API key", Body: data.APIKeyCreate{}, BodyRequired: true,
		Description: "Any token may make a key, but never one holding more than it does: scopes it lacks or that its user's role, modules and agents allow nothing of (docs/api.md, Scoped API keys), or agents beyond its agent_ids, are 403. " +
			"A user holds at most " + strconv.Itoa(validate.MaxLiveAPIKeys) + " keys that have not expired in a workspace (login tokens apart): one more is 409.",
		Out: data.APIKey{}, Status: http.StatusCreated, Extra: map[string]string{"token": "The token, `<key id>|<secret>`; shown once."},
		Errors: []int{http.StatusForbidden, http.StatusConflict}},
	"DELETE /api/v1/api-keys/{key_id}": {Tag: "API Keys", Summary: "Revoke one of the caller's API keys", Shape: shapeNone},
	"GET /api/v1/workspaces/{workspace_id}/api-keys": {Tag: "API Keys", Summary: "List every member's API keys bound to the workspace",
		Description: "Owners and admins; each key names its user.", Out: data.WorkspaceAPIKey{}, Shape: shapeList},
	"DELETE /api/v1/workspaces/{workspace_id}/api-keys/{key_id}": {Tag: "API Keys", Summary: "Revoke a member's API key",
		Description: "Owners and admins; an admin cannot revoke an owner's key.", Shape: shapeNone},

	// Users.
	"GET /api/v1/user":               {Tag: "User", Summary: "The caller", Out: data.User{}},
	"PUT /api/v1/user":               {Tag: "User", Summary: "Change the caller's name, email or password", Body: data.UserUpdate{}, Out: data.User{}, Errors: []int{http.StatusConflict}},
	"GET /api/v1/users":              {Tag: "User", Summary: "List every account (instance admins)", Out: data.User{}, Shape: shapeList},
	"POST /api/v1/users":             {Tag: "User", Summary: "Create an account and its personal workspace (instance admins)", Body: data.UserCreate{}, BodyRequired: true, Out: data.User{}, Status: http.StatusCreated, Errors: []int{http.StatusConflict}},
	"GET /api/v1/users/{user_id}":    {Tag: "User", Summary: "Show an account (instance admins)", Out: data.User{}},
	"DELETE /api/v1/users/{user_id}": {Tag: "User", Summary: "Delete an account (instance admins)", Shape: shapeNone},

	// Workspaces and their users.
	"GET /api/v1/workspaces":  {Tag: "Workspace", Summary: "List the caller's workspaces", Out: data.Workspace{}, Shape: shapeList},
	"POST /api/v1/workspaces": {Tag: "Workspace", Summary: "Create a workspace; the caller owns it", Body: data.WorkspaceCreate{}, BodyRequired: true, Out: data.Workspace{}, Status: http.StatusCreated},
	"GET /api/v1/workspaces/{workspace_id}/export": {Tag: "Workspace", Summary: "Export the workspace as one JSON document (owners and admins)",
		Description: "Agents with their versions, knowledge bases with their sources (files in base64), numbers and webhooks without secrets; credentials masked unless include_secrets=true.",
		Out:         data.WorkspaceExport{}, Shape: shapeRaw,
		Query: []queryParam{{"include_secrets", "Include provider credentials in the clear.", map[string]any{"type": "boolean"}}}},
	"POST /api/v1/workspaces/{workspace_id}/import": {Tag: "Workspace", Summary: "Import a workspace document into this workspace, all or nothing (owners and admins)",
		Body: data.WorkspaceExport{}, BodyRequired: true, Out: data.ImportResult{}, Status: http.StatusCreated,
		ExtraOut: map[string]any{"webhook_secrets": []data.ImportedSecret{}}},
	"GET /api/v1/workspaces/{workspace_id}":       {Tag: "Workspace", Summary: "Show a workspace", Out: data.Workspace{}},
	"PUT /api/v1/workspaces/{workspace_id}":       {Tag: "Workspace", Summary: "Update a workspace (owners and admins)", Body: data.WorkspaceUpdate{}, Out: data.Workspace{}},
	"DELETE /api/v1/workspaces/{workspace_id}":    {Tag: "Workspace", Summary: "Delete a workspace and every record in it (owners)", Shape: shapeNone},
	"GET /api/v1/workspaces/{workspace_id}/users": {Tag: "Workspace User", Summary: "List the workspace's users", Out: data.WorkspaceUser{}, Shape: shapeList},
	"POST /api/v1/workspaces/{workspace_id}/users": {Tag: "Workspace User", Summary: "Add a user to the workspace", Body: data.WorkspaceUserAdd{}, BodyRequired: true,
		Out: data.WorkspaceUser{}, Status: http.StatusCreated, Errors: []int{http.StatusConflict}},
	"GET /api/v1/workspaces/{workspace_id}/users/{user_id}": {Tag: "Workspace User", Summary: "Show a workspace user", Out: data.WorkspaceUser{}},
	"PUT /api/v1/workspaces/{workspace_id}/users/{user_id}": {Tag: "Workspace User", Summary: "Change a workspace user's role, modules or agents",
		Description: "A workspace always keeps an owner: demoting the last one is 422.", Body: data.WorkspaceUserUpdate{}, Out: data.WorkspaceUser{}},
	"DELETE /api/v1/workspaces/{workspace_id}/users/{user_id}": {Tag: "Workspace User", Summary: "Remove a user from the workspace",
		Description: "Removing the last owner is 422.", Shape: shapeNone, Errors: []int{http.StatusUnprocessableEntity}},

	// Agents and their versions.
	"GET /api/v1/agents": {Tag: "Agent", Summary: "List agents", Out: data.Agent{}, Shape: shapeList,
		Query: []queryParam{enumParam("status", "Only agents in this status.", data.AgentStatusDraft, data.AgentStatusPublished),
			strParam("name", "Only agents whose name contains this, ignoring case in every script (at most 255 characters). With it, one page looks at no more than "+data.Thousands(data.MaxAgentSearchScan)+" agents and may come back short with a next_cursor."),
			strParam("knowledge_base_id", "Only agents using this knowledge base: their configuration attaches it, or one of their stored versions does (the agents whose access a knowledge base write is checked against).")}},
	"POST /api/v1/agents": {Tag: "Agent", Summary: "Create a draft agent",
		Description: "Every omitted configuration group gets a complete, valid default, so the agent can be published at once.",
		Body:        agentCreateBody{}, BodyRequired: true, Out: data.Agent{}, Status: http.StatusCreated},
	"GET /api/v1/agents/{agent_id}": {Tag: "Agent", Summary: "Show an agent", Out: data.Agent{}},
	"PUT /api/v1/agents/{agent_id}": {Tag: "Agent", Summary: "Update an agent; a change makes it a draft", Body: agentUpdateBody{}, Out: data.Agent{}},
	"DELETE /api/v1/agents/{agent_id}": {Tag: "Agent", Summary: "Delete an agent and its versions",
		Description: "Numbers bound to it are unbound; its call history stays.", Shape: shapeNone},
	"POST /api/v1/agents/{agent_id}/publish": {Tag: "Agent Versions", Summary: "Publish the agent as a new version",
		Description: "409 tests_required or tests_failed while the agent's required tests have not passed on its draft (docs/testing-agents.md); 409 conflict when the agent holds " + strconv.Itoa(validate.MaxVersionsPerAgent) + " versions, the most it may (delete old ones first).",
		Body:        data.PublishRequest{}, Shape: shapeNone, IfMatch: true, Errors: []int{http.StatusConflict}},
	"GET /api/v1/agents/{agent_id}/versions":                  {Tag: "Agent Versions", Summary: "List the agent's versions, newest first", Out: data.AgentVersion{}, Shape: shapeList},
	"GET /api/v1/agents/{agent_id}/versions/{version_number}": {Tag: "Agent Versions", Summary: "Show a version", Out: data.AgentVersion{}},
	"DELETE /api/v1/agents/{agent_id}/versions/{version_number}": {Tag: "Agent Versions", Summary: "Delete a version nothing runs on",
		Description: "409 while the version is in use: the published version, a variant of the rollout, a version an open call or an active conversation runs on; the message says which. " +
			"Calls, analysis results and test runs keep its number, which is never given again; reading or restoring it is then 404. " +
			"An agent holds at most " + strconv.Itoa(validate.MaxVersionsPerAgent) + " versions (a publish past it is 409): delete old ones to publish again.",
		Shape: shapeNone, Errors: []int{http.StatusConflict}},
	"POST /api/v1/agents/{agent_id}/versions/{version_number}/restore": {Tag: "Agent Versions", Summary: "Make a version live again",
		Description: "The agent's configuration becomes the snapshot, published at that version; no version is created.",
		Out:         data.Agent{}, IfMatch: true},
	"GET /api/v1/agents/{agent_id}/versions/{version_number}/diff/{other}": {Tag: "Agent Versions", Summary: "Changed fields between two versions, or a version and the current agent",
		Out: []data.Change{}, Shape: shapeData},
	"GET /api/v1/catalog": {Tag: "Agent", Summary: "Models valid per provider", Out: data.Catalog{}, Shape: shapeData},

	// Webhooks and the audit log.
	"GET /api/v1/webhooks": {Tag: "Webhook", Summary: "List webhooks", Out: data.Webhook{}, Shape: shapeList},
	"GET /api/v1/webhooks/event-types": {Tag: "Webhook", Summary: "The event types this token may subscribe a webhook to, and those withheld from it",
		Out: data.WebhookEventTypes{}, Shape: shapeData},
	"POST /api/v1/webhooks": {Tag: "Webhook", Summary: "Create a webhook", Body: data.WebhookCreate{}, BodyRequired: true,
		Out: data.Webhook{}, Status: http.StatusCreated, Extra: map[string]string{"secret": "The signing secret (whsec_…); shown once."}},
	"GET /api/v1/webhooks/{webhook_id}":    {Tag: "Webhook", Summary: "Show a webhook", Out: data.Webhook{}},
	"PUT /api/v1/webhooks/{webhook_id}":    {Tag: "Webhook", Summary: "Update a webhook", Body: data.WebhookUpdate{}, Out: data.Webhook{}},
	"DELETE /api/v1/webhooks/{webhook_id}": {Tag: "Webhook", Summary: "Delete a webhook", Shape: shapeNone},
	"POST /api/v1/webhooks/{webhook_id}/rotate-secret": {Tag: "Webhook", Summary: "Replace the signing secret", Out: data.Webhook{}, IfMatch: true,
		Extra: map[string]string{"secret": "The new signing secret (whsec_…); shown once."}},
	"POST /api/v1/webhooks/{webhook_id}/test": {Tag: "Webhook", Summary: "Send a webhook.test event to this webhook", Out: data.Event{}, Shape: shapeData, Status: http.StatusAccepted},
	"POST /api/v1/webhooks/{webhook_id}/replay": {Tag: "Webhook", Summary: "Queue every event of a time range again for this webhook",
		Body: data.WebhookReplay{}, BodyRequired: true, Out: replayResult{}, Shape: shapeData, Status: http.StatusAccepted},
	"GET /api/v1/webhooks/{webhook_id}/deliveries": {Tag: "Webhook", Summary: "List the webhook's delivery attempts, newest first", Out: data.Delivery{}, Shape: shapeList},
	"POST /api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry": {Tag: "Webhook", Summary: "Deliver an attempt's event again",
		Out: data.Delivery{}, Shape: shapeData, Status: http.StatusAccepted, Errors: []int{http.StatusConflict}},
	"GET /api/v1/audit-log": {Tag: "Audit Log", Summary: "The workspace's events with actors and hash chain (owners and admins)",
		Out: data.Event{}, Shape: shapeList, Query: auditFilters},

	// Numbers, call history, analytics, subscription.
	"GET /api/v1/numbers": {Tag: "Number", Summary: "List numbers", Out: data.Number{}, Shape: shapeList, ExtraOut: accessByID,
		Description: "Beside the list, access says by number id what the caller may do with each number, as a number's show does.",
		Query: []queryParam{strParam("agent_id", "Only numbers bound to this agent, inbound or outbound."),
			strParam("q", "Only numbers whose nickname contains this, ignoring case in every script, or, when it is written as a phone number or part of one (digits with any +, spaces, dots, dashes or parentheses), whose phone_number contains its digits (at most 255 characters). With it, one page looks at no more than "+data.Thousands(data.MaxNumberSearchScan)+" numbers and may come back short with a next_cursor.")}},
	"POST /api/v1/numbers": {Tag: "Number", Summary: "Register a number", Body: data.NumberCreate{}, BodyRequired: true,
		Out: data.Number{}, ExtraOut: numberAccessBeside, Status: http.StatusCreated, Errors: []int{http.StatusConflict}},
	"GET /api/v1/numbers/{number_id}":    {Tag: "Number", Summary: "Show a number", Out: data.Number{}, ExtraOut: numberAccessBeside},
	"PUT /api/v1/numbers/{number_id}":    {Tag: "Number", Summary: "Update a number; the phone number itself cannot change", Body: data.NumberUpdate{}, Out: data.Number{}, ExtraOut: numberAccessBeside},
	"DELETE /api/v1/numbers/{number_id}": {Tag: "Number", Summary: "Delete a number of the current workspace", Shape: shapeNone},
	"GET /api/v1/calls":                  {Tag: "Call History", Summary: "List calls", Out: data.Call{}, Shape: shapeList, Query: callFilters},
	"POST /api/v1/calls": {Tag: "Call History", Summary: "Register a call (the voice runtime)", Body: data.CallCreate{}, BodyRequired: true,
		Description: "A retry under an Idempotency-Key is 404 when the caller no longer sees the call's agent (docs/api.md).",
		Out:         data.Call{}, Status: http.StatusCreated, Errors: []int{http.StatusNotFound}},
	"GET /api/v1/calls/{call_id}": {Tag: "Call History", Summary: "Show a call", Out: data.Call{}},
	"PUT /api/v1/calls/{call_id}": {Tag: "Call History", Summary: "Update a call; its status moves only forward",
		Description: "A key that may change calls but not read them (calls:runtime without call_history:read) gets 204 with no body: the answer holds nothing it could not read otherwise.",
		Body:        data.CallUpdate{}, Out: data.Call{}, Errors: []int{http.StatusConflict},
		Others: map[int]string{http.StatusNoContent: "Updated, for a caller that may not read calls (a calls:runtime key): no body."}},
	"DELETE /api/v1/calls/{call_id}": {Tag: "Call History", Summary: "Delete a call", Description: "409 while the call is on legal_hold.",
		Shape: shapeNone, Errors: []int{http.StatusConflict}},
	"GET /api/v1/analytics/calls": {Tag: "Analytics", Summary: "Call counts and durations by hour or day",
		Out: data.CallAnalytics{}, Shape: shapeData, Query: analyticsQuery},
	"POST /api/v1/calls/{call_id}/analyze": {Tag: "Call History", Summary: "Have the agent's model analyze the call (a job)",
		Description: "202 with the job (GET /api/v1/jobs/{job_id}); a call with an analysis pending gets that job. The model of the call's agent version fills " +
			"its analysis_config's fields through structured output (a forced tool call on bedrock_claude); an answer that does not fit is retried once, then recorded as analysis_error. Event call.analyzed, or call.analysis_failed with the analysis_error.",
		Out: data.Job{}, Shape: shapeData, Status: http.StatusAccepted},
	"POST /api/v1/agents/{agent_id}/analysis/backfill": {Tag: "Call History", Summary: "Analyze the agent's calls of a range again, as one job with progress",
		Description: "The calls created in [from, to) are analyzed with the analysis_config of agent_version (else the published version, else the current configuration), " +
			"each by its own version's model; the job's progress counts the calls. A job stopped midway resumes after the last call stored: each call is analyzed once. " +
			"409 conflict while a backfill of the agent is still queued or running: one at a time.",
		Body: data.AnalysisBackfill{}, BodyRequired: true, Out: data.Job{}, Shape: shapeData, Status: http.StatusAccepted, Errors: []int{http.StatusConflict}},
	"GET /api/v1/analytics/analysis": {Tag: "Analytics", Summary: "One post-call analysis field's figures: counts per value, number statistics, success rate",
		Description: "From per-field rollups kept with each analyzed call: counts per value (enum, boolean), count, mean, p50 and p90 within 1% (number), " +
			"the success rate of analysis.call_successful per bucket, and the same per agent version.",
		Out: data.AnalysisFigures{}, Shape: shapeData, Query: analysisQuery,
		Errors: []int{http.StatusNotFound}}, // agent_id names an agent the caller does not see
	"GET /api/v1/subscription": {Tag: "Subscription", Summary: "The workspace's plan, limits and usage", Out: data.Subscription{}},
	"GET /api/v1/price-table": {Tag: "Subscription", Summary: "The workspace's price table (owners and admins)",
		Description: "Prices per provider, model and unit, in the table's currency; calls' cost is priced from it when their usage is set.",
		Out:         data.PriceTable{}},
	"PUT /api/v1/price-table": {Tag: "Subscription", Summary: "Replace the workspace's price table (owners and admins)",
		Description: "Prices are decimal strings (at most 6 decimals, never negative); calls already priced keep their cost.",
		Body:        data.PriceTableSet{}, BodyRequired: true, Out: data.PriceTable{}},

	// Knowledge bases.
	"GET /api/v1/knowledge-bases": {Tag: "Knowledge Base", Summary: "List knowledge bases", Out: data.KnowledgeBase{}, Shape: shapeList,
		Description: "The list does not say what the caller may do with each knowledge base: its show does, in access."},
	"POST /api/v1/knowledge-bases": {Tag: "Knowledge Base", Summary: "Create a knowledge base, with optional texts and urls",
		Description: "Texts are indexed at once; urls are fetched in the background (status pending, then indexed or failed).",
		Body:        data.KnowledgeBaseCreate{}, BodyRequired: true, Out: data.KnowledgeBase{}, ExtraOut: accessBeside, Status: http.StatusCreated},
	"GET /api/v1/knowledge-bases/{knowledge_base_id}":    {Tag: "Knowledge Base", Summary: "Show a knowledge base", Out: data.KnowledgeBase{}, ExtraOut: accessBeside},
	"PUT /api/v1/knowledge-bases/{knowledge_base_id}":    {Tag: "Knowledge Base", Summary: "Rename a knowledge base", Body: data.KnowledgeBaseUpdate{}, Out: data.KnowledgeBase{}, ExtraOut: accessBeside},
	"DELETE /api/v1/knowledge-bases/{knowledge_base_id}": {Tag: "Knowledge Base", Summary: "Delete a knowledge base; agents drop it from knowledge_base_ids", Shape: shapeNone},
	"POST /api/v1/knowledge-bases/{knowledge_base_id}/sources/add": {Tag: "Knowledge Base", Summary: "Add files, texts or urls",
		Description: "multipart/form-data with repeated files (or files[]) parts, texts parts (a part's filename is the text's title) and urls parts; or JSON with texts and urls. " +
			"Files: plain text, Markdown, CSV, HTML, JSON, PDF, DOCX, judged by content; at most 20 MiB each and 50 MiB in all by default.",
		Body: data.SourcesAdd{}, BodyRequired: true, Multipart: sourcesMultipart, Out: data.KnowledgeBase{}, ExtraOut: accessBeside},
	"DELETE /api/v1/knowledge-bases/{knowledge_base_id}/sources/delete/{source_type}/{source_id}": {Tag: "Knowledge Base", Summary: "Delete a source",
		Description: "An unknown source_type is 422.", Out: data.KnowledgeBase{}, ExtraOut: accessBeside, Errors: []int{http.StatusUnprocessableEntity}},
	"GET /api/v1/knowledge-bases/{knowledge_base_id}/sources/files/{source_id}/content": {Tag: "Knowledge Base", Summary: "Download a file source's original bytes",
		Description: "Served with the file's content type, Range and If-None-Match support.", Shape: shapeRaw, Media: "application/octet-stream", AltMedia: []string{"*/*"},
		Others: map[int]string{http.StatusPartialContent: "The requested range.", http.StatusNotModified: "Not modified.", http.StatusRequestedRangeNotSatisfiable: "The range is outside the file."}},
	"POST /api/v1/knowledge-bases/{knowledge_base_id}/sources/urls/{source_id}/refetch": {Tag: "Knowledge Base", Summary: "Fetch a url source again",
		Description: "The source is pending again until the fetch completes.", Out: data.KnowledgeBase{}, ExtraOut: accessBeside, Status: http.StatusAccepted},
	"POST /api/v1/knowledge-bases/{knowledge_base_id}/query": {Tag: "Knowledge Base", Summary: "Retrieve the chunks best matching a query",
		Description: "Chunks with a score in [0, 1], best first, at most chunks_to_retrieve, none under similarity_threshold.",
		Body:        data.KnowledgeQuery{}, BodyRequired: true, Out: []data.KnowledgeChunk{}, Shape: shapeData},
	"POST /api/v1/agents/{agent_id}/knowledge/query": {Tag: "Knowledge Base", Summary: "Retrieve with an agent's knowledge_base_config over its knowledge bases",
		Body: data.AgentKnowledgeQuery{}, BodyRequired: true, Out: []data.KnowledgeChunk{}, Shape: shapeData},
}

// accessBeside is the member beside every knowledge base and number a route answers
// with: what the caller may do with it (data.Access).
var accessBeside = map[string]any{"access": data.Access{}}

// numberAccessBeside is accessBeside for a number (data.NumberAccess).
var numberAccessBeside = map[string]any{"access": data.NumberAccess{}}

// accessByID is the member beside a list of numbers: data.NumberAccess by number id.
var accessByID = map[string]any{"access": map[string]data.NumberAccess{}}

// sourcesMultipart is the multipart form of adding knowledge base sources.
var sourcesMultipart = map[string]any{
	"type": "object",
	"properties": map[string]any{
		// One property per part name: files[] and files.items parts are accepted as files
		// too, but declaring them as properties gives generated clients two fields with
		// the same identifier (oapi-codegen: "Files redeclared").
		"files": map[string]any{"type": "array", "items": map[string]any{"type": "string", "contentMediaType": "application/octet-stream"},
			"description": "File parts. Parts named files[] (or files.items) are accepted too and mean the same."},
		"texts": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Each part is a text source's content; its filename, if any, the title."},
		"urls":  map[string]any{"type": "array", "items": map[string]any{"type": "string", "format": "uri"}, "description": "Each part is one URL."},
	},
}
