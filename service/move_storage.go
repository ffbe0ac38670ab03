package service

// How a move carries each bucket (bbolt) and table (PostgreSQL) that holds records: the
// one list the guard test (cli TestMigrateFromDataServesTheSameAnswers) checks the real
// schema of both engines against, so a new kind of record is not left behind unseen.
// A new bucket or table goes in MoveCopied (with a step in move.go that copies it) or in
// MoveLeft (with the reason). The same test moves the installation back into bbolt and
// compares each bucket's keys, so a kind of record stored inside a bucket needs its
// step too.

// MoveCopied maps each bucket and table whose records MoveInstallation copies to the kind
// of MoveCounts it reports them under.
var MoveCopied = map[string]string{
	"users": "users", "api_keys": "tokens", "workspaces": "workspaces", "members": "members",
	"subscriptions": "subscription_plans", "subscription_plans": "subscription_plans",
	"price_tables": "price_tables", "agents": "agents", "agent_versions": "agent_versions",
	"rollouts": "rollouts", "agent_rollouts": "rollouts",
	"agent_tests": "agent_tests", "test_runs": "test_runs", "test_run_results": "test_results",
	"knowledge_bases": "knowledge_bases", "kb_sources": "knowledge_sources", "knowledge_sources": "knowledge_sources",
	"kb_chunks": "knowledge_chunks", "knowledge_chunks": "knowledge_chunks", "source_files": "files",
	"numbers": "numbers", "calls": "calls",
	"conversations": "conversations", "conversation_items": "conversations",
	"conversations_to_redact": "conversations_to_redact",
	"campaigns":               "campaigns", "recipients": "campaign_recipients", "campaign_recipients": "campaign_recipients",
	"suppressions": "suppressions", "webhooks": "webhooks", "deliveries": "deliveries",
	"jobs": "jobs", "events": "events",
}

// MoveLeft maps every other bucket and table to why the move does not copy it.
var MoveLeft = func() map[string]string {
	left := map[string]string{}
	for reason, names := range map[string][]string{
		"an index: the destination's own writes of the moved records keep it": {
			"users_by_email", "users_index", "memberships", "api_keys_by_user", "api_keys_by_ws", "api_keys_by_expiry",
			"agents_by_ws", "agents_by_status", "agent_tests_by_agent", "test_runs_by_agent", "test_runs_by_revision",
			"knowledge_bases_by_ws", "kb_pending_urls", "numbers_by_phone", "numbers_by_ws", "numbers_by_agent",
			"calls_open", "call_scopes", "call_entries", "call_posting_docs", "call_event_refs", "call_terms",
			"campaigns_by_ws", "campaigns_open", "campaigns_listed", "recipients_by_call", "recipients_by_campaign",
			"recipients_by_state", "recipients_due", "recipients_lease",
			"conversations_idle", "conversations_by_ws", "conversations_open", "conversations_by_call",
			"conversations_listed", "conversations_by_status", "suppressions_by_phone", "suppressions_by_ws",
			"webhooks_by_ws", "deliveries_by_webhook", "deliveries_due", "deliveries_by_type",
			"events_by_ws", "events_by_facet", "events_by_time", "jobs_due", "jobs_by_ws", "jobs_listed", "jobs_unique",
		},
		"a count or rollup: derived where the moved records land": {
			"call_rollups", "call_minutes", "call_scope_counts", "call_term_counts", "call_analysis_values",
			"call_field_rollups", "campaigns_kept", "campaign_kept_counts", "suppression_counts",
		},
		"the chain's head: the destination links the moved events in order and keeps its own":                                                 {"event_heads", "event_clocks"},
		"the events not yet fanned out: the move takes each moved event off the destination's outbox unless the source still held it there":   {"outbox"},
		"listed for the sealing job as each agent is copied (ListAgentToSeal)":                                                                {"agents_to_seal"},
		"the database's own settings (schema version, cursor key, migrations applied): the destination keeps its own":                         {"meta", "schema_migrations"},
		"rate limit windows, PostgreSQL's only (a single node counts in memory): they start afresh, as after a restart":                       {"rate_windows"},
		"a deleted campaign's recipients still to remove: its record is gone, so the move reaches none of them and nothing is left to remove": {"campaigns_deleting"},
		"kept Idempotency-Key responses, not moved (they expire within a day; a retry after the move runs afresh), nor the lists over them": {
			"idempotency", "idempotency_responses", "idempotency_by_conversation", "idempotency_by_time",
			"idempotency_by_started_conversation", "idempotency_by_agent_conversation", "idempotency_by_workspace",
			"idempotency_starts_to_note",
		},
	} {
		for _, n := range names {
			left[n] = reason
		}
	}
	return left
}()
