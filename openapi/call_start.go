package openapi

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// variablesRule describes a map of {{name}} values (validate.Variables).
var variablesRule = variablesUpTo(validate.MaxConversationVariables)

// variablesUpTo is variablesRule for a map of at most max values (a campaign's recipient
// holds fewer than a call).
func variablesUpTo(max int) fieldRule {
	return fieldRule{Keys: &fieldRule{Pattern: namePattern, MaxLength: validate.MaxIdentifier}, MaxProperties: max,
		Description: fmt.Sprintf("Values for {{name}} references: strings (at most %d characters), numbers or booleans; at most %d, %d KiB encoded.",
			validate.MaxVariableValue, max, validate.MaxObjectBytes>>10)}
}

// The call-start contract (conventions §23, docs/runtime.md): the start, rollouts, and
// the members it adds to agents and numbers.
func init() {
	opDocs["POST /api/v1/calls/start"] = opDoc{Tag: "Call History", Summary: "Start a call: what it runs, registered in one transaction (the voice runtime)",
		Description: "Routes the call (inbound: to_number's inbound agent; outbound: agent_id, else from_number's outbound agent), picks the version " +
			"(the rollout's variant for the caller, else the published version), fills every {{variable}} (the version's default_variables, the " +
			"number's variables, the request's, the built-ins), checks the month's minutes and the concurrency limits, and registers the call, in one " +
			"transaction. The answer holds the configuration with llm_config.api_key in clear: this answer only, never logged or sent in an event. " +
			"404 for an unknown number or agent; 409 conflict for a number with no agent for the direction; 409 not_published; 422 missing_variables " +
			"naming variables.<name>; 403 quota_exceeded; 429 concurrency_limit with Retry-After. See docs/runtime.md.",
		Body: data.CallStart{}, BodyRequired: true, Out: data.CallStartAnswer{}, Shape: shapeData, Status: http.StatusCreated,
		Errors: []int{http.StatusNotFound, http.StatusConflict, http.StatusTooManyRequests}}
	opDocs["GET /api/v1/agents/{agent_id}/rollout"] = opDoc{Tag: "Agent", Summary: "Show the agent's rollout and each variant's figures",
		Description: "404 when no rollout stands (the published version takes every call).", Out: data.Rollout{}}
	opDocs["PUT /api/v1/agents/{agent_id}/rollout"] = opDoc{Tag: "Agent", Summary: "Start or change the agent's rollout",
		Description: "Weighted variants of published versions: each caller (from_number of an inbound call, to_number of an outbound one) keeps " +
			"its variant while the rollout stands. A rollout that stands keeps its start and the figures of the versions it keeps, and a change of " +
			"weights moves only callers of versions that lost weight or left the list, to versions that gained it. Publishing or " +
			"restoring the agent ends it. With rollback, a variant past the threshold once it and another have min_calls measured calls loses its " +
			"weight to the best variant within it (agent.rollout_rolled_back). See docs/agents.md, Rollouts.",
		Body: data.RolloutSet{}, BodyRequired: true, Out: data.Rollout{}}
	opDocs["DELETE /api/v1/agents/{agent_id}/rollout"] = opDoc{Tag: "Agent", Summary: "End the agent's rollout: the published version is live again",
		Description: "404 when no rollout stands.", Shape: shapeNone}

	fieldRules["CallStart"] = map[string]fieldRule{
		"direction":   oneOf(data.DirectionInbound, data.DirectionOutbound).with(true, ""),
		"to_number":   fieldRule{Pattern: e164Pattern}.with(true, "E.164. Inbound: the workspace's number dialed (its inbound agent answers). Outbound: the number called."),
		"from_number": {Description: "E.164 number or SIP URI. Inbound: the caller. Outbound: the number calling; a number of the workspace routes to its outbound agent when agent_id is absent."},
		"agent_id":    {Description: "Outbound only: the agent that calls. An outbound call needs agent_id or a workspace from_number; an inbound one refuses it."},
		"variables":   variablesRule,
		"metadata":    nestedObjectRule,
	}
	fieldRules["CallStartAnswer"] = map[string]fieldRule{
		"call":    {Description: "The call registered (status registered, agent_version the version chosen), as GET /api/v1/calls/{call_id} shows it."},
		"agent":   {Description: "The configuration to run for this call."},
		"variant": {Description: "The version that runs and why: a rollout's variant, or the published version (weight 100)."},
	}
	fieldRules["RunConfig"] = map[string]fieldRule{
		"version":   {Description: "The published version this configuration is."},
		"variables": {NotNull: true, Description: "The values every {{name}} was filled with, built-ins included."},
		"knowledge": {Description: "How to retrieve for a user turn: method and path, with body's members and query; null without knowledge bases."},
	}
	fieldRules["KnowledgeRoute"] = map[string]fieldRule{
		"method": oneOf(http.MethodPost),
		"body":   {NotNull: true, Description: "Send these members and query (the user's words)."},
	}
	fieldRules["CallVariant"] = map[string]fieldRule{
		"weight":  between(0, 100),
		"rollout": {Description: "true when the agent's rollout chose the version."},
	}
	rollback := map[string]fieldRule{
		"metric":    oneOf(data.RolloutMetrics...).with(true, "failed_rate: failed calls over finished ones; success_rate: calls whose analysis says call_successful true over those whose analysis says it."),
		"threshold": between(0, 1).with(true, "A failed_rate above it, or a success_rate below it, is past it."),
		"min_calls": between(1, validate.MaxRolloutMinCalls).with(true, "Measured calls each of the two variants compared needs first."),
	}
	fieldRules["RolloutRollback"] = rollback
	fieldRules["RolloutSet"] = map[string]fieldRule{
		"variants": fieldRule{MinItems: 1, MaxItems: validate.MaxRolloutVariants}.with(true, "Distinct published versions; weights sum to 100."),
		"rollback": {Description: "The automatic rollback; null or absent: none."},
	}
	fieldRules["RolloutVariantSet"] = map[string]fieldRule{
		"version": atLeast(1).with(true, "A published version of the agent."),
		"weight":  between(0, 100).with(true, "Percent of callers."),
	}
	fieldRules["RolloutVariant"] = map[string]fieldRule{
		"weight":      between(0, 100),
		"calls":       {Description: "The variant's calls created since the rollout began that reached ended or failed."},
		"failed":      {Description: "Of those, the failed ones (abandoned calls included)."},
		"analyzed":    {Description: "Calls whose analysis holds a boolean call_successful."},
		"successful":  {Description: "Of those, the ones where it is true."},
		"rolled_back": {Description: "The automatic rollback took this variant's weight."},
	}
	fieldRules["Rollout"] = map[string]fieldRule{
		"started_at": {Description: "When the rollout began: its figures count calls created since."},
	}
	fieldRules["PromptConfig"]["default_variables"] = fieldRule{Keys: variablesRule.Keys,
		Description: "The lowest-precedence values of {{name}} references, under a number's and a call's; versioned with the texts they fill. {} when none."}
	fieldRules["PromptConfig"]["timezone"] = fieldRule{
		Description: "IANA time zone name of the built-in current_time, e.g. Europe/Paris; UTC when unset."}
	fieldRules["Agent"]["max_concurrent_calls"] = between(1, validate.MaxConcurrentCalls).with(false,
		"The agent's calls open at once (registered or ongoing); beyond it a start is 429 concurrency_limit. null: no bound. Policy: no part of a version.")
	fieldRules["Agent"]["used_variables"] = fieldRule{Description: "The {{name}} references of the agent's configuration, sorted (read-only)."}
	fieldRules["agentPolicyBody"] = map[string]fieldRule{
		"max_concurrent_calls": between(1, validate.MaxConcurrentCalls).with(false, "null removes the bound; policy, so a change leaves the agent published."),
	}
	fieldRules["Number"]["variables"] = fieldRule{Keys: variablesRule.Keys, Description: "Values for the {{name}} references of the calls this number routes, over the agent's default_variables."}
	fieldRules["NumberCreate"]["variables"] = variablesRule
	fieldRules["NumberUpdate"]["variables"] = variablesRule.with(false, variablesRule.Description+" Replaces the stored map whole.")

	fieldRules["AgentKnowledgeQuery"]["agent_version"] = atLeast(1).with(false,
		"Search with that published version's knowledge_base_ids and knowledge_base_config (the version a call runs); the agent's current ones when omitted.")

	analytics := opDocs["GET /api/v1/analytics/calls"]
	analytics.Query = append(slices.Clone(analytics.Query), queryParam{"agent_version",
		"Only calls of this version of agent_id (which it needs: versions are numbered per agent). Calls stored before per-version counting count in no version.",
		map[string]any{"type": "integer", "minimum": 1}})
	opDocs["GET /api/v1/analytics/calls"] = analytics
	fieldRules["CallAnalytics"]["versions"] = fieldRule{NotNull: true,
		Description: "With agent_id: each agent_version's counts and cost with its cost series, oldest first, calls without a version last; [] otherwise."}
	fieldRules["VersionTotals"] = map[string]fieldRule{
		"agent_version": {Description: "null for calls registered without a version."},
		"cost_micros":   {NotNull: true, Description: "The version's calls' cost in micro-units per currency ({} when none had a cost)."},
		"series":        {NotNull: true, Description: "The version's cost in each bucket of the answer's series."},
	}
	fieldRules["VersionCostPoint"] = map[string]fieldRule{"cost_micros": {NotNull: true}}
	typeDocs["VersionTotals"] = "One agent version's calls over the range: the totals' counts and cost, and its cost per bucket."
	typeDocs["VersionCostPoint"] = "One bucket of a version's cost series."

	typeDocs["CallStart"] = "Body of a call start: the direction, the numbers, the agent for an outbound call, the call's variables (docs/runtime.md)."
	typeDocs["CallStartAnswer"] = "What a call runs: the registered call, the configuration, the variant."
	typeDocs["RunConfig"] = "A published version with its variables filled in and its credential in clear: this answer only."
	typeDocs["Rollout"] = "Weighted variants of an agent's published versions, sticky per caller, with each variant's figures (conventions §23)."
}
