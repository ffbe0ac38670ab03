package client

// operation is one route of the API as the client calls it.
type operation struct {
	Method string
	Path   string
	// Func is the client method that calls it, "Service.Method" (a field of Client and
	// a method of its type); the coverage test checks that it exists.
	Func string
	// Idempotent routes honour Idempotency-Key, so a POST carrying one may be retried.
	Idempotent bool
}

// operations is every call the client makes, by the operationId of docs/openapi.json.
// TestClientCoversDocument holds it equal to the document's operations.
var operations = map[string]operation{
	// Campaigns, dial tasks and the suppression list.
	"campaignList":       {"GET", "/api/v1/campaigns", "Campaigns.List", false},
	"campaignCreate":     {"POST", "/api/v1/campaigns", "Campaigns.Create", true},
	"campaignShow":       {"GET", "/api/v1/campaigns/{campaign_id}", "Campaigns.Get", false},
	"campaignDelete":     {"DELETE", "/api/v1/campaigns/{campaign_id}", "Campaigns.Delete", false},
	"campaignRecipients": {"GET", "/api/v1/campaigns/{campaign_id}/recipients", "Campaigns.Recipients", false},
	"campaignPause":      {"POST", "/api/v1/campaigns/{campaign_id}/pause", "Campaigns.Pause", false},
	"campaignResume":     {"POST", "/api/v1/campaigns/{campaign_id}/resume", "Campaigns.Resume", false},
	"campaignCancel":     {"POST", "/api/v1/campaigns/{campaign_id}/cancel", "Campaigns.Cancel", false},
	"dialClaim":          {"POST", "/api/v1/dial-tasks/claim", "Campaigns.ClaimDialTasks", false},
	"suppressionList":    {"GET", "/api/v1/suppressions", "Campaigns.Suppressions", false},
	"suppressionAdd":     {"POST", "/api/v1/suppressions", "Campaigns.Suppress", false},
	"suppressionImport":  {"POST", "/api/v1/suppressions/import", "Campaigns.ImportSuppressions", false},
	"suppressionDelete":  {"DELETE", "/api/v1/suppressions/{suppression_id}", "Campaigns.Unsuppress", false},

	// Operations.
	"healthz": {"GET", "/healthz", "Operations.Health", false},
	"readyz":  {"GET", "/readyz", "Operations.Ready", false},
	"metrics": {"GET", "/metrics", "Operations.Metrics", false},
	"openAPI": {"GET", "/api/v1/openapi.json", "Operations.OpenAPI", false},
	"backup":  {"GET", "/api/v1/admin/backup", "Operations.Backup", false},
	"jobShow": {"GET", "/api/v1/jobs/{job_id}", "Jobs.Get", false},
	"jobList": {"GET", "/api/v1/jobs", "Jobs.List", false},

	// Authentication and API keys.
	"login":        {"POST", "/api/v1/auth/login", "Auth.Login", false},
	"logout":       {"POST", "/api/v1/auth/logout", "Auth.Logout", false},
	"aPIKeyList":   {"GET", "/api/v1/api-keys", "APIKeys.List", false},
	"aPIKeyCreate": {"POST", "/api/v1/api-keys", "APIKeys.Create", true},
	"aPIKeyDelete": {"DELETE", "/api/v1/api-keys/{key_id}", "APIKeys.Delete", false},

	"workspaceAPIKeyList":   {"GET", "/api/v1/workspaces/{workspace_id}/api-keys", "Workspaces.ListAPIKeys", false},
	"workspaceAPIKeyRevoke": {"DELETE", "/api/v1/workspaces/{workspace_id}/api-keys/{key_id}", "Workspaces.RevokeAPIKey", false},

	// Users.
	"me":         {"GET", "/api/v1/user", "Users.Me", false},
	"meUpdate":   {"PUT", "/api/v1/user", "Users.UpdateMe", false},
	"userList":   {"GET", "/api/v1/users", "Users.List", false},
	"userCreate": {"POST", "/api/v1/users", "Users.Create", true},
	"userShow":   {"GET", "/api/v1/users/{user_id}", "Users.Get", false},
	"userDelete": {"DELETE", "/api/v1/users/{user_id}", "Users.Delete", false},

	// Workspaces, their users, export and import.
	"workspaceList":       {"GET", "/api/v1/workspaces", "Workspaces.List", false},
	"workspaceCreate":     {"POST", "/api/v1/workspaces", "Workspaces.Create", true},
	"workspaceShow":       {"GET", "/api/v1/workspaces/{workspace_id}", "Workspaces.Get", false},
	"workspaceUpdate":     {"PUT", "/api/v1/workspaces/{workspace_id}", "Workspaces.Update", false},
	"workspaceDelete":     {"DELETE", "/api/v1/workspaces/{workspace_id}", "Workspaces.Delete", false},
	"workspaceExport":     {"GET", "/api/v1/workspaces/{workspace_id}/export", "Workspaces.Export", false},
	"workspaceImport":     {"POST", "/api/v1/workspaces/{workspace_id}/import", "Workspaces.Import", true},
	"workspaceUserList":   {"GET", "/api/v1/workspaces/{workspace_id}/users", "Workspaces.ListUsers", false},
	"workspaceUserAdd":    {"POST", "/api/v1/workspaces/{workspace_id}/users", "Workspaces.AddUser", true},
	"workspaceUserShow":   {"GET", "/api/v1/workspaces/{workspace_id}/users/{user_id}", "Workspaces.GetUser", false},
	"workspaceUserUpdate": {"PUT", "/api/v1/workspaces/{workspace_id}/users/{user_id}", "Workspaces.UpdateUser", false},
	"workspaceUserRemove": {"DELETE", "/api/v1/workspaces/{workspace_id}/users/{user_id}", "Workspaces.RemoveUser", false},

	// Agents and their versions.
	"agentList":           {"GET", "/api/v1/agents", "Agents.List", false},
	"agentCreate":         {"POST", "/api/v1/agents", "Agents.Create", true},
	"agentShow":           {"GET", "/api/v1/agents/{agent_id}", "Agents.Get", false},
	"agentUpdate":         {"PUT", "/api/v1/agents/{agent_id}", "Agents.Update", false},
	"agentDelete":         {"DELETE", "/api/v1/agents/{agent_id}", "Agents.Delete", false},
	"agentPublish":        {"POST", "/api/v1/agents/{agent_id}/publish", "Agents.Publish", false},
	"agentVersionList":    {"GET", "/api/v1/agents/{agent_id}/versions", "Agents.ListVersions", false},
	"agentVersionShow":    {"GET", "/api/v1/agents/{agent_id}/versions/{version_number}", "Agents.GetVersion", false},
	"agentVersionDelete":  {"DELETE", "/api/v1/agents/{agent_id}/versions/{version_number}", "Agents.DeleteVersion", false},
	"agentVersionRestore": {"POST", "/api/v1/agents/{agent_id}/versions/{version_number}/restore", "Agents.RestoreVersion", false},
	"agentVersionDiff":    {"GET", "/api/v1/agents/{agent_id}/versions/{version_number}/diff/{other}", "Agents.DiffVersions", false},
	"agentKnowledgeQuery": {"POST", "/api/v1/agents/{agent_id}/knowledge/query", "Agents.QueryKnowledge", false},
	"rolloutShow":         {"GET", "/api/v1/agents/{agent_id}/rollout", "Agents.Rollout", false},
	"rolloutSet":          {"PUT", "/api/v1/agents/{agent_id}/rollout", "Agents.SetRollout", false},
	"rolloutEnd":          {"DELETE", "/api/v1/agents/{agent_id}/rollout", "Agents.EndRollout", false},
	"catalog":             {"GET", "/api/v1/catalog", "Agents.Catalog", false},

	// Knowledge bases.
	"knowledgeBaseList":   {"GET", "/api/v1/knowledge-bases", "KnowledgeBases.List", false},
	"knowledgeBaseCreate": {"POST", "/api/v1/knowledge-bases", "KnowledgeBases.Create", true},
	"knowledgeBaseShow":   {"GET", "/api/v1/knowledge-bases/{knowledge_base_id}", "KnowledgeBases.Get", false},
	"knowledgeBaseUpdate": {"PUT", "/api/v1/knowledge-bases/{knowledge_base_id}", "KnowledgeBases.Update", false},
	"knowledgeBaseDelete": {"DELETE", "/api/v1/knowledge-bases/{knowledge_base_id}", "KnowledgeBases.Delete", false},
	"knowledgeBaseQuery":  {"POST", "/api/v1/knowledge-bases/{knowledge_base_id}/query", "KnowledgeBases.Query", false},
	"sourcesAdd":          {"POST", "/api/v1/knowledge-bases/{knowledge_base_id}/sources/add", "KnowledgeBases.AddSources", true},
	"sourceDelete":        {"DELETE", "/api/v1/knowledge-bases/{knowledge_base_id}/sources/delete/{source_type}/{source_id}", "KnowledgeBases.DeleteSource", false},
	"sourceFileContent":   {"GET", "/api/v1/knowledge-bases/{knowledge_base_id}/sources/files/{source_id}/content", "KnowledgeBases.FileContent", false},
	"sourceURLRefetch":    {"POST", "/api/v1/knowledge-bases/{knowledge_base_id}/sources/urls/{source_id}/refetch", "KnowledgeBases.RefetchURL", false},

	// Numbers, calls, analytics, subscription.
	"numberList":   {"GET", "/api/v1/numbers", "Numbers.List", false},
	"numberCreate": {"POST", "/api/v1/numbers", "Numbers.Create", true},
	"numberShow":   {"GET", "/api/v1/numbers/{number_id}", "Numbers.Get", false},
	"numberUpdate": {"PUT", "/api/v1/numbers/{number_id}", "Numbers.Update", false},
	"numberDelete": {"DELETE", "/api/v1/numbers/{number_id}", "Numbers.Delete", false},
	// Agent tests, their runs and the publish gate.
	"agentTestList":     {"GET", "/api/v1/agents/{agent_id}/tests", "AgentTests.List", false},
	"agentTestCreate":   {"POST", "/api/v1/agents/{agent_id}/tests", "AgentTests.Create", true},
	"agentTestFromCall": {"POST", "/api/v1/agents/{agent_id}/tests/from-call/{call_id}", "AgentTests.FromCall", true},
	"agentTestShow":     {"GET", "/api/v1/agents/{agent_id}/tests/{test_id}", "AgentTests.Get", false},
	"agentTestUpdate":   {"PUT", "/api/v1/agents/{agent_id}/tests/{test_id}", "AgentTests.Update", false},
	"agentTestDelete":   {"DELETE", "/api/v1/agents/{agent_id}/tests/{test_id}", "AgentTests.Delete", false},
	"testRunList":       {"GET", "/api/v1/agents/{agent_id}/test-runs", "TestRuns.List", false},
	"testRunCreate":     {"POST", "/api/v1/agents/{agent_id}/test-runs", "TestRuns.Start", true},
	"testRunShow":       {"GET", "/api/v1/agents/{agent_id}/test-runs/{run_id}", "TestRuns.Get", false},
	"publishGate":       {"GET", "/api/v1/agents/{agent_id}/publish-gate", "TestRuns.PublishGate", false},

	"conversationStart":   {"POST", "/api/v1/agents/{agent_id}/conversations", "Conversations.Start", true},
	"conversationList":    {"GET", "/api/v1/conversations", "Conversations.List", false},
	"conversationShow":    {"GET", "/api/v1/conversations/{conversation_id}", "Conversations.Get", false},
	"conversationMessage": {"POST", "/api/v1/conversations/{conversation_id}/messages", "Conversations.Send", true},
	"conversationEnd":     {"POST", "/api/v1/conversations/{conversation_id}/end", "Conversations.End", false},
	"callList":            {"GET", "/api/v1/calls", "Calls.List", false},
	"callExport":          {"GET", "/api/v1/calls/export", "Calls.Export", false},
	"callRegister":        {"POST", "/api/v1/calls", "Calls.Register", true},
	"callStart":           {"POST", "/api/v1/calls/start", "Calls.Start", true},
	"callShow":            {"GET", "/api/v1/calls/{call_id}", "Calls.Get", false},
	"callUpdate":          {"PUT", "/api/v1/calls/{call_id}", "Calls.Update", false},
	"callDelete":          {"DELETE", "/api/v1/calls/{call_id}", "Calls.Delete", false},
	"callAnalytics":       {"GET", "/api/v1/analytics/calls", "Analytics.Calls", false},
	"analysisFigures":     {"GET", "/api/v1/analytics/analysis", "Analytics.Analysis", false},
	"callAnalyze":         {"POST", "/api/v1/calls/{call_id}/analyze", "Calls.Analyze", true},
	"analysisBackfill":    {"POST", "/api/v1/agents/{agent_id}/analysis/backfill", "Agents.BackfillAnalysis", true},
	"subscriptionShow":    {"GET", "/api/v1/subscription", "Subscription.Get", false},
	"priceTableShow":      {"GET", "/api/v1/price-table", "Prices.Get", false},
	"priceTableSet":       {"PUT", "/api/v1/price-table", "Prices.Set", false},
	"auditLog":            {"GET", "/api/v1/audit-log", "Audit.List", false},
	"auditHead":           {"GET", "/api/v1/audit-log/head", "Audit.Head", false},
	"eventStream":         {"GET", "/api/v1/events/stream", "Audit.Stream", false},
	"auditVerify":         {"GET", "/api/v1/audit-log/verify", "Audit.Verify", false},

	// Webhooks.
	"webhookList":         {"GET", "/api/v1/webhooks", "Webhooks.List", false},
	"webhookEventTypes":   {"GET", "/api/v1/webhooks/event-types", "Webhooks.EventTypes", false},
	"webhookCreate":       {"POST", "/api/v1/webhooks", "Webhooks.Create", true},
	"webhookShow":         {"GET", "/api/v1/webhooks/{webhook_id}", "Webhooks.Get", false},
	"webhookUpdate":       {"PUT", "/api/v1/webhooks/{webhook_id}", "Webhooks.Update", false},
	"webhookDelete":       {"DELETE", "/api/v1/webhooks/{webhook_id}", "Webhooks.Delete", false},
	"webhookRotateSecret": {"POST", "/api/v1/webhooks/{webhook_id}/rotate-secret", "Webhooks.RotateSecret", false},
	"webhookTest":         {"POST", "/api/v1/webhooks/{webhook_id}/test", "Webhooks.Test", true},
	"webhookReplay":       {"POST", "/api/v1/webhooks/{webhook_id}/replay", "Webhooks.Replay", true},
	"deliveryList":        {"GET", "/api/v1/webhooks/{webhook_id}/deliveries", "Webhooks.ListDeliveries", false},
	"deliveryRetry":       {"POST", "/api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry", "Webhooks.RetryDelivery", true},
}
