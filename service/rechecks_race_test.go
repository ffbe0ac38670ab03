package service_test

import (
	"context"
	"maps"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// afterViewStore runs afterView once, after the first read transaction that ends once it
// is armed: a test's change then commits between a service's read and its write.
type afterViewStore struct {
	service.Store
	armed     atomic.Bool
	afterView func()
}

func (s *afterViewStore) View(ctx context.Context, fn func(tx service.Tx) error) error {
	err := s.Store.View(ctx, fn)
	if s.armed.CompareAndSwap(true, false) {
		s.afterView()
	}
	return err
}

// A campaign's creation reads its number's region before its write, to read the
// recipients' national numbers (validate.CampaignCreate). That read cannot go stale: a
// number's phone number and workspace never change (service.NumberTx.PutNumber), and the
// write reads the number again (campaignRefs), so a number deleted between the two, even
// one registered again at once under a new id, refuses the campaign (422 on number_id)
// and stores nothing. The store commits the delete right after the region's read.
func TestCampaignCreateRechecksItsNumberInTheWrite(t *testing.T) {
	engine := testkit.OpenEngine(t)
	store := &afterViewStore{Store: engine}
	svc, err := service.New(store, engine.ServiceOptions())
	if err != nil {
		t.Fatal(err)
	}
	u, err := svc.Users.CreateUser(context.Background(), data.UserCreate{Name: "Ada", Email: "ada@example.com", Password: "password-ada"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testkit.As(u)
	a, err := svc.Agents.CreateAgent(ctx, data.AgentCreate{Name: data.Some("Dialer")})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Agents.PublishAgent(ctx, a.ID, data.PublishRequest{}); err != nil {
		t.Fatal(err)
	}
	n, err := svc.Numbers.CreateNumber(ctx, data.NumberCreate{PhoneNumber: "+14155550123", Provider: "sip"})
	if err != nil {
		t.Fatal(err)
	}
	store.afterView = func() {
		if err := svc.Numbers.DeleteNumber(ctx, n.ID); err != nil {
			t.Error(err)
		}
		if _, err := svc.Numbers.CreateNumber(ctx, data.NumberCreate{PhoneNumber: "+14155550123", Provider: "sip"}); err != nil {
			t.Error(err)
		}
	}
	store.armed.Store(true)
	mc := 1
	_, err = svc.Campaigns.CreateCampaign(ctx, data.CampaignCreate{Name: "Spring", AgentID: a.ID, NumberID: n.ID,
		Window:        &data.CampaignWindow{Days: data.Weekdays, Start: "00:00", End: "23:59"},
		MaxConcurrent: &mc, Recipients: []data.RecipientInput{{PhoneNumber: "(415) 555-0100"}}})
	if store.armed.Load() {
		t.Fatal("the creation read nothing before its write")
	}
	wantFields(t, err, "number_id")
	list, _, err := svc.Campaigns.Campaigns(ctx, data.CampaignFilter{}, data.PageRequest{})
	if err != nil || len(list) != 0 {
		t.Errorf("campaigns after the refused creation = %v, %v; want none", list, err)
	}
}

// An import checks its workspace in a read, prepares the document's sources outside any
// transaction (extraction and chunking: seconds for large files), and stores it in a
// write: a workspace deleted meanwhile gets nothing (404), where its records were stored
// under a workspace that no longer exists, their phone numbers taken for good. The store
// commits the delete right after the import's first read.
func TestImportDoesNotOutliveItsWorkspace(t *testing.T) {
	engine := testkit.OpenEngine(t)
	store := &afterViewStore{Store: engine}
	svc, err := service.New(store, engine.ServiceOptions())
	if err != nil {
		t.Fatal(err)
	}
	u, err := svc.Users.CreateUser(context.Background(), data.UserCreate{Name: "Ada", Email: "ada@example.com", Password: "password-ada"})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := svc.Workspaces.CreateWorkspace(testkit.As(u), data.WorkspaceCreate{Name: "Staging"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testkit.AsRole(u, ws.ID, data.RoleOwner)
	store.afterView = func() {
		if err := svc.Workspaces.DeleteWorkspace(ctx, ws.ID); err != nil {
			t.Error(err)
		}
	}
	store.armed.Store(true)
	doc := &data.WorkspaceExport{Format: data.ExportFormat, Version: data.ExportVersion,
		Numbers: []data.ExportNumber{{PhoneNumber: "+14155550177", Provider: "sip"}}}
	_, err = svc.Exports.ImportWorkspace(ctx, ws.ID, doc, data.ImportOptions{})
	if store.armed.Load() {
		t.Fatal("the import read nothing before its write")
	}
	wantCode(t, err, data.ENOTFOUND)
	// The number is free: nothing of the document was stored.
	if _, err := svc.Numbers.CreateNumber(testkit.As(u), data.NumberCreate{PhoneNumber: "+14155550177", Provider: "sip"}); err != nil {
		t.Errorf("registering the document's number after the refused import: %v", err)
	}
}

// A test run's job runs each case outside any transaction (a conversation with a model:
// seconds) and stores its result in a write: an agent deleted while a case ran took its
// runs along, and the result must not be stored for a run that is gone (on bbolt it was,
// under no run, kept for good; PostgreSQL refused it, and the job was retried for nothing).
// The job ends without a failure: nothing is left to do. The hook deletes the agent as
// the case starts.
func TestTestRunCaseDoesNotOutliveItsAgent(t *testing.T) {
	stand := llmtest.New(t, data.LLMInternal)
	stand.Respond(func(llmtest.Request) llmtest.Reply { return llmtest.Text("Welcome to the test kitchen.") })
	engine := testkit.OpenEngine(t)
	svc := servicesOn(t, engine, engine, nil)
	svc.Conversations.Configure(cli.ConversationOptions(cli.LLMSettings{AllowURLPrefixes: []string{stand.URL + "/"}}))
	u, err := svc.Users.CreateUser(context.Background(), data.UserCreate{Name: "Ada", Email: "ada@example.com", Password: "password-ada"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testkit.As(u)
	agent, run := greetsRun(t, svc, ctx, data.AgentCreate{Name: data.Some("Kitchen"), LLMConfig: data.Some(llmPatch(stand.LLMConfig())),
		PromptConfig: data.Some(data.PromptConfigPatch{FirstSpeaker: data.Some("user")})})
	svc.TestRuns.OnCase(func(string, string, int) {
		if err := svc.Agents.DeleteAgent(ctx, agent.ID); err != nil {
			t.Error(err)
		}
	})
	runner := svc.Jobs.NewRunner(service.RunnerOptions{Workers: 1, Kinds: []string{service.JobKindTestRun}, Jitter: noJitter})
	if n, err := runner.RunDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("ran %d jobs: %v", n, err)
	}
	err = engine.View(context.Background(), func(tx service.Tx) error {
		results, err := tx.TestResults(run.ID)
		if err == nil && len(results) > 0 {
			t.Errorf("results stored for the run of the deleted agent: %+v", results[0])
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	jobs, _, err := svc.Jobs.ListJobs(ctx, data.JobFilter{}, data.PageRequest{})
	if err != nil || len(jobs) != 1 || jobs[0].Status != data.JobSucceeded {
		t.Errorf("the run's job after its agent was deleted = %s, %v; want it succeeded", jobStatuses(jobs), err)
	}
}

// jobStatuses shows each job's status and last error.
func jobStatuses(jobs []*data.Job) string {
	var out []string
	for _, j := range jobs {
		e := ""
		if j.LastError != nil {
			e = ": " + *j.LastError
		}
		out = append(out, j.Status+e)
	}
	return strings.Join(out, "; ")
}

// What only an owner may do to owners is decided by the caller's role as stored in the
// write, not as the request found it: an owner (b) demoted after its request was
// authenticated, before its write, can no longer remove, demote or grant an owner, nor
// delete the workspace. b's
// principal is the one authentication resolved before the demotion committed.
func TestOwnerDemotedDuringARequestNoLongerActsAsOne(t *testing.T) {
	engine := testkit.OpenEngine(t)
	svc := servicesOn(t, engine, engine, nil)
	user := func(email string) *data.User {
		u, err := svc.Users.CreateUser(context.Background(), data.UserCreate{Name: email, Email: email, Password: "password-" + email})
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	a, b, c, d := user("a@example.com"), user("b@example.com"), user("c@example.com"), user("d@example.com")
	ws, err := svc.Workspaces.CreateWorkspace(testkit.As(a), data.WorkspaceCreate{Name: "Shared"})
	if err != nil {
		t.Fatal(err)
	}
	ctxA := testkit.AsRole(a, ws.ID, data.RoleOwner)
	for _, u := range []*data.User{b, c} {
		if _, err := svc.WorkspaceUsers.AddWorkspaceUser(ctxA, ws.ID, data.WorkspaceUserAdd{ID: u.ID, Role: data.RoleOwner}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.WorkspaceUsers.AddWorkspaceUser(ctxA, ws.ID, data.WorkspaceUserAdd{ID: d.ID, Role: data.RoleMember}); err != nil {
		t.Fatal(err)
	}
	ctxB := testkit.AsRole(b, ws.ID, data.RoleOwner) // authenticated while b was an owner
	if _, err := svc.WorkspaceUsers.UpdateWorkspaceUser(ctxA, ws.ID, b.ID, data.WorkspaceUserUpdate{Role: data.Some(data.RoleAdmin)}); err != nil {
		t.Fatal(err)
	}
	err = svc.WorkspaceUsers.RemoveWorkspaceUser(ctxB, ws.ID, c.ID)
	wantCode(t, err, data.EFORBIDDEN)
	_, err = svc.WorkspaceUsers.UpdateWorkspaceUser(ctxB, ws.ID, c.ID, data.WorkspaceUserUpdate{Role: data.Some(data.RoleMember)})
	wantCode(t, err, data.EFORBIDDEN)
	_, err = svc.WorkspaceUsers.UpdateWorkspaceUser(ctxB, ws.ID, d.ID, data.WorkspaceUserUpdate{Role: data.Some(data.RoleOwner)})
	wantCode(t, err, data.EFORBIDDEN)
	for _, u := range []*data.User{c, d} {
		if err := svc.WorkspaceUsers.RemoveWorkspaceUser(ctxA, ws.ID, u.ID); err != nil {
			t.Fatal(err)
		}
	}
	_, err = svc.WorkspaceUsers.AddWorkspaceUser(ctxB, ws.ID, data.WorkspaceUserAdd{ID: d.ID, Role: data.RoleOwner})
	wantCode(t, err, data.EFORBIDDEN)
	wantCode(t, svc.Workspaces.DeleteWorkspace(ctxB, ws.ID), data.EFORBIDDEN)
	members, _, err := svc.WorkspaceUsers.ListWorkspaceUsers(ctxA, ws.ID, data.PageRequest{})
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string]string{}
	for _, m := range members {
		roles[m.ID] = *m.Role
	}
	if want := map[string]string{a.ID: data.RoleOwner, b.ID: data.RoleAdmin}; !maps.Equal(roles, want) {
		t.Errorf("members after the demoted owner's requests = %v, want %v", roles, want)
	}
}
