package server_test

import (
	"fmt"
	"net/url"
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// The audit log of an API key that reads one job kind's module and not another's (scopes
// audit:read and knowledge_base:read: a knowledge base's embedding failures, not an
// agent's test runs') reads only the job.failed events of the kinds it reads. More than
// service.MaxAuditScan failures of a test run, newer than its own, neither hide its events
// nor shape its page: they come on the first page with no next_cursor, with no filter, a
// type filter and an actor filter alike. Before, the page was empty with a next_cursor:
// how many test runs failed.
func TestAuditLogOfSomeJobKindsReadsOnlyThem(t *testing.T) {
	e := newEnv(t)
	agent := e.do("POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": "Mine"})
	expect(t, agent, 201)
	kb := e.do("POST", "/api/v1/knowledge-bases", e.Owner.Token, map[string]any{"name": "Manuals"})
	expect(t, kb, 201)
	key := e.do("POST", "/api/v1/api-keys", e.Owner.Token, map[string]any{"name": "auditor",
		"scopes": []string{data.ScopeAuditRead, data.ReadScope(data.ModuleKnowledgeBase)}})
	expect(t, key, 201)
	token := key.JSON()["token"].(string)
	failure := func(id, agentID, kind string) string {
		agentField := "null"
		if agentID != "" {
			agentField = fmt.Sprintf("%q", agentID)
		}
		return fmt.Sprintf(`{"id":%q,"workspace_id":%q,"agent_id":%s,"kind":%q,"status":"failed","knowledge_base_id":null}`, id, e.Owner.WorkspaceID, agentField, kind)
	}
	// A failure of an embedding the key reads, then the test runs' it may not read, newer
	// and many: as the service records them, straight to the store.
	appendNewerEvents(t, e, 1, data.EventJobFailed, failure("job_01JD6ZJ7Q8W9X0Y1Z2A3B4C5D6", "", service.JobKindEmbed))
	appendNewerEvents(t, e, service.MaxAuditScan+10, data.EventJobFailed, failure("job_01JD6ZJ7Q8W9X0Y1Z2A3B4C5D7", agent.Data()["id"].(string), service.JobKindTestRun))
	kinds := func(r *response) (types, jobs []string) {
		for _, item := range r.List() {
			ev := item.(map[string]any)
			types = append(types, ev["type"].(string))
			if d, _ := ev["data"].(map[string]any); ev["type"] == data.EventJobFailed {
				jobs = append(jobs, d["kind"].(string))
			}
		}
		return types, jobs
	}
	for _, c := range []struct {
		query string
		want  []string
	}{
		// Security events too (audit:read), not the agent's: agents:read it lacks.
		{"", []string{data.EventJobFailed, data.EventAPIKeyCreated, data.EventKnowledgeBaseCreated, data.EventAPIKeyCreated}},
		{"type=" + data.EventJobFailed, []string{data.EventJobFailed}},
		{"actor=" + url.QueryEscape(e.Owner.ID), []string{data.EventJobFailed, data.EventAPIKeyCreated, data.EventKnowledgeBaseCreated}},
	} {
		r := e.do("GET", "/api/v1/audit-log?per_page=50&"+c.query, token, nil)
		expect(t, r, 200)
		types, jobs := kinds(r)
		if !slices.Equal(types, c.want) || !slices.Equal(jobs, []string{service.JobKindEmbed}) || r.Meta()["next_cursor"] != nil {
			t.Errorf("?%s: %v (jobs %v), next_cursor %v; want %v on the first page, the embedding's failure, no next_cursor", c.query, types, jobs, r.Meta()["next_cursor"], c.want)
		}
	}
	// The owner, who reads every job kind, pages through the long log as before.
	r := e.do("GET", "/api/v1/audit-log?per_page=50&type="+data.EventJobFailed, e.Owner.Token, nil)
	expect(t, r, 200)
	if len(r.List()) != 50 || r.Meta()["next_cursor"] == nil {
		t.Errorf("the owner's first page: %d events, next_cursor %v; want 50 and a cursor", len(r.List()), r.Meta()["next_cursor"])
	}
}
