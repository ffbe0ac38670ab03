package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/strictjson"
)

// ownerContext acts as the owner of ws, as an authenticated request would.
func ownerContext(userID, ws string) context.Context {
	return data.WithPrincipal(context.Background(), &data.Principal{UserID: userID, WorkspaceID: ws,
		CurrentWorkspaceID: ws, Role: data.RoleOwner, Modules: data.Modules})
}

// seedStopped creates a user with an agent (published once, api_key set), a knowledge base,
// a number and a suppressed number in its workspace, closes the database and returns the
// workspace id.
func seedStopped(t *testing.T, dir string) string {
	t.Helper()
	db, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	u, err := NewServices(db).Users.CreateUser(context.Background(), data.UserCreate{Name: "A", Email: "a@example.com", Password: "password123"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ownerContext(u.ID, u.PersonalWorkspaceID)
	kb, err := Services(db).KnowledgeBases.CreateKnowledgeBase(ctx, data.KnowledgeBaseCreate{Name: "FAQ", Texts: []data.TextInput{{Content: "We ship worldwide."}}})
	if err != nil {
		t.Fatal(err)
	}
	agents := Services(db).Agents
	var in data.AgentCreate
	if err := strictjson.Decode([]byte(`{"name": "Desk", "llm_config": {"api_key": "gsk_cli_secret_5555", "knowledge_base_ids": ["`+kb.ID+`"]}}`), &in); err != nil {
		t.Fatal(err)
	}
	a, err := agents.CreateAgent(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	desc := "v1"
	if err := agents.PublishAgent(ctx, a.ID, data.PublishRequest{Description: &desc}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewServices(db).Numbers.CreateNumber(ctx, data.NumberCreate{PhoneNumber: "+14155550177", Provider: "sip", InboundAgentID: &a.ID}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := NewServices(db).Suppressions.AddSuppression(ctx, data.SuppressionCreate{PhoneNumber: "+14155550178"}); err != nil {
		t.Fatal(err)
	}
	return u.PersonalWorkspaceID
}

func TestWorkspaceExportImportCommands(t *testing.T) {
	adminOptions.PasswordCost = bcrypt.MinCost
	src := t.TempDir()
	ws := seedStopped(t, src)
	clear := exportMaskedAndClear(t, src, ws)
	dst, u := importIntoFreshInstance(t, clear)

	db, err := bolt.Open(dst, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	checkImportedWorkspace(t, db, u)
	db.Close() // the export below must fail on the workspace, not on the data's lock

	out, err := runCombined(t, "workspace", "export", "--data", dst, "--workspace", "ws_00000000000000000000000000")
	if err == nil || !strings.Contains(strings.ToLower(out+err.Error()), "not found") {
		t.Errorf("export of an unknown workspace: %v\n%s", err, out)
	}
}

// exportMaskedAndClear exports workspace ws of the stopped instance in src twice: masked
// by default (to a file of mode 0600), then with its secrets, whose file it returns.
func exportMaskedAndClear(t *testing.T, src, ws string) string {
	t.Helper()
	masked := filepath.Join(t.TempDir(), "ws.json")
	if out, err := runCombined(t, "workspace", "export", "--data", src, "--workspace", ws, "--out", masked); err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(masked)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"api_key": "****5555"`) || strings.Contains(string(raw), "gsk_cli_secret") {
		t.Errorf("the default export does not mask the api_key:\n%s", raw)
	}
	if fi, _ := os.Stat(masked); fi.Mode().Perm() != 0o600 {
		t.Errorf("export file mode %v, want 0600", fi.Mode().Perm())
	}
	clear := filepath.Join(t.TempDir(), "ws-secrets.json")
	out, err := runCombined(t, "workspace", "export", "--data", src, "--workspace", ws, "--out", clear, "--include-secrets")
	if err != nil || !strings.Contains(out, "in the clear") {
		t.Fatalf("export --include-secrets: %v\n%s", err, out)
	}
	return clear
}

// importIntoFreshInstance imports the document in clear into another stopped instance,
// a fresh user's workspace, then again, which the taken number refuses. It returns the
// instance's directory and the user.
func importIntoFreshInstance(t *testing.T, clear string) (string, *data.User) {
	t.Helper()
	dst := t.TempDir()
	db, err := bolt.Open(dst, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	u, err := NewServices(db).Users.CreateUser(context.Background(), data.UserCreate{Name: "B", Email: "b@example.com", Password: "password123"})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	out, err := runCombined(t, "workspace", "import", "--data", dst, "--workspace", u.PersonalWorkspaceID, "--in", clear)
	if err != nil || !strings.Contains(out, "1 agents, 1 knowledge bases, 1 numbers, 0 webhooks, 1 suppressed numbers added (0 listed already)") {
		t.Fatalf("import: %v\n%s", err, out)
	}
	// The same document again: the number is taken, and the command says which.
	out, err = runCombined(t, "workspace", "import", "--data", dst, "--workspace", u.PersonalWorkspaceID, "--in", clear)
	if err == nil || !strings.Contains(err.Error(), "+14155550177") {
		t.Fatalf("second import: %v\n%s", err, out)
	}
	return dst, u
}

// checkImportedWorkspace checks the imported agent, its key masked, the suppression
// list, and that the clear key survived the move.
func checkImportedWorkspace(t *testing.T, db *bolt.DB, u *data.User) {
	t.Helper()
	ctx := ownerContext(u.ID, u.PersonalWorkspaceID)
	agents, _, err := Services(db).Agents.ListAgents(ctx, data.AgentFilter{})
	if err != nil || len(agents) != 1 {
		t.Fatalf("agents after import: %v, %v", agents, err)
	}
	a := agents[0]
	if a.Name != "Desk" || a.Status != data.AgentStatusPublished || a.PublishedVersion == nil || *a.PublishedVersion != 1 {
		t.Errorf("imported agent: %+v", a)
	}
	if a.LLMConfig.APIKey == nil || *a.LLMConfig.APIKey != "****5555" {
		t.Errorf("imported api_key shows %v, want the mask of the clear key", a.LLMConfig.APIKey)
	}
	if list, _, err := Services(db).Suppressions.Suppressions(ctx, data.PageRequest{}); err != nil || len(list) != 1 || list[0].PhoneNumber != "+14155550178" {
		t.Errorf("the suppression list after import: %v, %v", list, err)
	}
	stream, err := Services(db).Exports.ExportWorkspace(context.Background(), u.PersonalWorkspaceID, data.ExportOptions{IncludeSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var again strings.Builder
	if _, err := stream.WriteTo(&again); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(again.String(), `"api_key": "gsk_cli_secret_5555"`) {
		t.Errorf("the clear key did not survive the move:\n%s", again.String())
	}
}
