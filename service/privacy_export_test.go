package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestExportImportCarriesPrivacy: an export holds the workspace's and each agent's privacy;
// an import sets them on the target; a document with an invalid rule is refused with the
// field named and changes nothing.
func TestExportImportCarriesPrivacy(t *testing.T) {
	env := testkit.New(t, nil)
	u, other := env.User(t, "a@example.com"), env.User(t, "b@example.com")
	ctx := testkit.As(u)
	wsPrivacy := data.WorkspacePrivacy{RetentionDays: days(30), KnowledgeRetentionDays: days(365),
		Redaction: data.Redaction{Detectors: []string{"card", "iban"}, Rules: []data.RedactionRule{{Name: "order_id", Pattern: `ORD-\d{6}`}}}}
	if _, err := env.Svc.Workspaces.UpdateWorkspace(ctx, u.PersonalWorkspaceID, data.WorkspaceUpdate{Privacy: data.Some(data.WorkspacePrivacyPatch{
		RetentionDays: data.Some(wsPrivacy.RetentionDays), KnowledgeRetentionDays: data.Some(wsPrivacy.KnowledgeRetentionDays),
		Redaction: data.Some(wsPrivacy.Redaction)})}); err != nil {
		t.Fatal(err)
	}
	agentPrivacy := data.AgentPrivacy{RetentionDays: days(7), Redaction: data.Redaction{Detectors: []string{"email"}, Rules: []data.RedactionRule{}}}
	if _, err := env.Svc.Agents.CreateAgent(ctx, data.AgentCreate{Name: data.Some("Desk"),
		Privacy: data.Some(data.AgentPrivacyPatch{RetentionDays: data.Some(agentPrivacy.RetentionDays), Redaction: data.Some(agentPrivacy.Redaction)})}); err != nil {
		t.Fatal(err)
	}
	stream, err := env.Svc.Exports.ExportWorkspace(ctx, u.PersonalWorkspaceID, data.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := stream.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	stream.Close()
	var doc data.WorkspaceExport
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Workspace.Privacy == nil || !reflect.DeepEqual(*doc.Workspace.Privacy, wsPrivacy) {
		t.Fatalf("exported workspace privacy %+v", doc.Workspace.Privacy)
	}
	if len(doc.Agents) != 1 || doc.Agents[0].Privacy == nil || !reflect.DeepEqual(*doc.Agents[0].Privacy, agentPrivacy) {
		t.Fatalf("exported agent privacy %+v", doc.Agents)
	}

	bad := doc
	bad.Workspace.Privacy = &data.WorkspacePrivacy{Redaction: data.Redaction{Rules: []data.RedactionRule{{Name: "x", Pattern: "(unclosed"}}}}
	_, err = env.Svc.Exports.ImportWorkspace(context.Background(), other.PersonalWorkspaceID, &bad, data.ImportOptions{})
	wantFields(t, err, "workspace.privacy.redaction.rules.0.pattern")

	if _, err := env.Svc.Exports.ImportWorkspace(context.Background(), other.PersonalWorkspaceID, &doc, data.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	octx := testkit.As(other)
	w, err := env.Svc.Workspaces.Workspace(octx, other.PersonalWorkspaceID)
	if err != nil || !reflect.DeepEqual(w.Privacy, wsPrivacy) {
		t.Errorf("imported workspace privacy %+v, %v", w.Privacy, err)
	}
	agents, _, err := env.Svc.Agents.ListAgents(octx, data.AgentFilter{PageRequest: data.PageRequest{PerPage: 10}})
	if err != nil || len(agents) != 1 || !reflect.DeepEqual(agents[0].Privacy, agentPrivacy) {
		t.Errorf("imported agents %+v, %v", agents, err)
	}
}
