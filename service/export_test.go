package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// The export and import rules run in the service, on any store: a caller acting in
// another workspace finds nothing to export or import into; the operator (no caller, the
// CLI) may use any workspace, and its import is audited as the system's, in the same
// transaction as the records it made.
func TestExportImportThroughTheService(t *testing.T) {
	env := testkit.New(t, nil)
	u, other := env.User(t, "a@example.com"), env.User(t, "b@example.com")
	ctx := testkit.As(u)
	if _, err := env.Svc.Agents.CreateAgent(ctx, data.AgentCreate{Name: data.Some("Desk")}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Svc.Exports.ExportWorkspace(ctx, other.PersonalWorkspaceID, data.ExportOptions{}); data.ErrorCode(err) != data.ENOTFOUND {
		t.Errorf("export of another workspace: %v, want not_found", err)
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
	if len(doc.Agents) != 1 || doc.Agents[0].Key != "desk" {
		t.Fatalf("exported agents: %+v", doc.Agents)
	}
	if _, err := env.Svc.Exports.ImportWorkspace(ctx, other.PersonalWorkspaceID, &doc, data.ImportOptions{}); data.ErrorCode(err) != data.ENOTFOUND {
		t.Errorf("import into another workspace: %v, want not_found", err)
	}
	res, err := env.Svc.Exports.ImportWorkspace(context.Background(), other.PersonalWorkspaceID, &doc, data.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	events, _, err := env.Svc.Audit.ListAuditLog(testkit.As(other), data.AuditFilter{}, data.PageRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range events {
		types = append(types, e.Type)
		if e.Type == data.EventWorkspaceImported && (e.Actor.Type != "system" || !bytes.Contains(e.Data, []byte(res.Agents[0].ID))) {
			t.Errorf("workspace.imported: actor %+v, data %s", e.Actor, e.Data)
		}
	}
	// Newest first: the import's event follows the agent it created.
	if len(types) < 2 || types[0] != data.EventWorkspaceImported || types[1] != data.EventAgentCreated {
		t.Errorf("the importing workspace's audit log: %v", types)
	}
}
