package service_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/voiceapi/voiceapi/data"
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
