package service_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// kbEnv is a knowledge base service on a fresh database, with a user acting in its
// personal workspace.
type kbEnv struct {
	svc *service.KnowledgeBaseService
	ctx context.Context
	ws  string
}

func newKBEnv(t *testing.T, tune func(*service.Options)) *kbEnv {
	t.Helper()
	db := testkit.OpenEngine(t)
	svc := servicesOn(t, db, db, tune)
	u := mustUser(t, svc, "kb@example.com")
	return &kbEnv{svc: svc.KnowledgeBases, ctx: ownerCtx(u.ID, u.PersonalWorkspaceID), ws: u.PersonalWorkspaceID}
}

func texts(n int) []data.TextInput {
	out := make([]data.TextInput, n)
	for i := range out {
		out[i] = data.TextInput{Content: fmt.Sprintf("Text number %d.", i)}
	}
	return out
}

func TestKnowledgeStaleURLResultIsDropped(t *testing.T) {
	e := newKBEnv(t, nil)
	kb, err := e.svc.CreateKnowledgeBase(e.ctx, data.KnowledgeBaseCreate{Name: "Web", URLs: []string{"https://example.com/a"}})
	if err != nil {
		t.Fatal(err)
	}
	bg := context.Background()
	jobs, err := e.svc.PendingURLs(bg)
	if err != nil || len(jobs) != 1 || jobs[0].URL != "https://example.com/a" {
		t.Fatalf("pending: %v %v", jobs, err)
	}
	// A refetch while the first fetch runs: the first result must not win.
	if _, err := e.svc.RefetchURL(e.ctx, kb.ID, jobs[0].SourceID); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.CompleteURL(bg, jobs[0], data.FetchedURL{Body: []byte("old page text"), ContentType: "text/plain"}); err != nil {
		t.Fatal(err)
	}
	got, _ := e.svc.KnowledgeBase(e.ctx, kb.ID)
	if got.URLs[0].Status != data.SourcePending {
		t.Fatalf("a stale result changed the source: %+v", got.URLs[0])
	}
	jobs, _ = e.svc.PendingURLs(bg)
	if err := e.svc.CompleteURL(bg, jobs[0], data.FetchedURL{Err: errors.New("the server answered 500")}); err != nil {
		t.Fatal(err)
	}
	got, _ = e.svc.KnowledgeBase(e.ctx, kb.ID)
	if got.URLs[0].Status != data.SourceFailed || got.URLs[0].Error == nil || *got.URLs[0].Error != "the server answered 500" {
		t.Fatalf("failed source: %+v", got.URLs[0])
	}
	if jobs, _ := e.svc.PendingURLs(bg); len(jobs) != 0 {
		t.Errorf("still pending: %v", jobs)
	}
	// A result for a deleted source is dropped without error.
	if _, err := e.svc.RefetchURL(e.ctx, kb.ID, got.URLs[0].ID); err != nil {
		t.Fatal(err)
	}
	jobs, _ = e.svc.PendingURLs(bg)
	if _, err := e.svc.DeleteSource(e.ctx, kb.ID, data.SourceURLs, got.URLs[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.CompleteURL(bg, jobs[0], data.FetchedURL{Body: []byte("late text"), ContentType: "text/plain"}); err != nil {
		t.Errorf("a result for a deleted source: %v, want it dropped", err)
	}
}

// The outbound URL check comes from the options and runs once per url of a request: the
// service is the one place that validates.
func TestKnowledgeURLCheckRunsOnceFromTheOptions(t *testing.T) {
	var calls atomic.Int32
	e := newKBEnv(t, func(o *service.Options) {
		o.URLGuard = func(u string) error {
			calls.Add(1)
			if strings.Contains(u, "blocked") {
				return errors.New("the host is blocked")
			}
			return nil
		}
	})
	_, err := e.svc.CreateKnowledgeBase(e.ctx, data.KnowledgeBaseCreate{Name: "Web", URLs: []string{"https://ok.example/", "https://blocked.example/"}})
	var de *data.Error
	if !errors.As(err, &de) || de.Code != data.EINVALID || len(de.Fields["urls.1"]) != 1 || len(de.Fields) != 1 {
		t.Fatalf("create with a blocked url: %v, want one 422 fault on urls.1", err)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("the check ran %d times for two urls, want 2", n)
	}
	if list, _, _ := e.svc.ListKnowledgeBases(e.ctx, data.PageRequest{}); len(list) != 0 {
		t.Fatalf("a refused create stored %d knowledge bases", len(list))
	}
	kb, err := e.svc.CreateKnowledgeBase(e.ctx, data.KnowledgeBaseCreate{Name: "Web"})
	if err != nil {
		t.Fatal(err)
	}
	calls.Store(0)
	_, err = e.svc.AddSources(e.ctx, kb.ID, data.SourcesAdd{URLs: []string{"https://blocked.example/x"}, Texts: texts(1)})
	if data.ErrorCode(err) != data.EINVALID || calls.Load() != 1 {
		t.Fatalf("add with a blocked url: %v after %d checks, want a 422 after 1", err, calls.Load())
	}
	if got, _ := e.svc.KnowledgeBase(e.ctx, kb.ID); len(got.Texts)+len(got.URLs) != 0 {
		t.Errorf("a refused add stored sources: %+v", got)
	}
}

func TestKnowledgeSourceLimitAtTheEdge(t *testing.T) {
	cases := []struct {
		name         string
		create, add  int
		wantAddField string // "" when the add is accepted
	}{
		{"fills the limit", 2, 1, ""},
		{"one past the limit", 2, 2, "texts"},
		{"full, adding one", 3, 1, "texts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newKBEnv(t, func(o *service.Options) { o.Knowledge.MaxSources = 3 })
			kb, err := e.svc.CreateKnowledgeBase(e.ctx, data.KnowledgeBaseCreate{Name: "Limit", Texts: texts(c.create)})
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.svc.AddSources(e.ctx, kb.ID, data.SourcesAdd{Texts: texts(c.add)})
			if c.wantAddField == "" {
				if err != nil || len(got.Texts) != c.create+c.add {
					t.Fatalf("add: %v, want %d texts", err, c.create+c.add)
				}
				return
			}
			var de *data.Error
			if !errors.As(err, &de) || de.Code != data.EINVALID || len(de.Fields[c.wantAddField]) == 0 {
				t.Fatalf("add past the limit: %v, want a 422 on %s", err, c.wantAddField)
			}
			if now, _ := e.svc.KnowledgeBase(e.ctx, kb.ID); len(now.Texts) != c.create {
				t.Errorf("a refused add changed the sources: %d texts, want %d", len(now.Texts), c.create)
			}
		})
	}
	// A create past the limit is refused whole.
	e := newKBEnv(t, func(o *service.Options) { o.Knowledge.MaxSources = 3 })
	if _, err := e.svc.CreateKnowledgeBase(e.ctx, data.KnowledgeBaseCreate{Name: "Big", Texts: texts(4)}); data.ErrorCode(err) != data.EINVALID {
		t.Errorf("create with 4 sources under a limit of 3: %v, want 422", err)
	}
}

// Another workspace's knowledge base, or a caller without one, meets not_found on every
// method, and nothing changes.
func TestKnowledgeScopedToTheCallersWorkspace(t *testing.T) {
	e := newKBEnv(t, nil)
	kb, err := e.svc.CreateKnowledgeBase(e.ctx, data.KnowledgeBaseCreate{Name: "Mine", Texts: texts(1)})
	if err != nil {
		t.Fatal(err)
	}
	textID := kb.Texts[0].ID
	q := data.KnowledgeQuery{Query: "text"}
	for name, ctx := range map[string]context.Context{
		"another workspace": ownerCtx("usr_other", "ws_01JZZZZZZZZZZZZZZZZZZZZZZZ"),
		"no caller":         context.Background(),
	} {
		calls := map[string]error{}
		_, calls["get"] = e.svc.KnowledgeBase(ctx, kb.ID)
		_, calls["update"] = e.svc.UpdateKnowledgeBase(ctx, kb.ID, data.KnowledgeBaseUpdate{Name: data.Opt[string]{Set: true, V: "Theirs"}})
		calls["delete"] = e.svc.DeleteKnowledgeBase(ctx, kb.ID)
		_, calls["add"] = e.svc.AddSources(ctx, kb.ID, data.SourcesAdd{Texts: texts(1)})
		_, calls["delete source"] = e.svc.DeleteSource(ctx, kb.ID, data.SourceTexts, textID)
		_, calls["query"] = e.svc.QueryKnowledgeBase(ctx, kb.ID, q)
		_, _, calls["file"] = e.svc.SourceFile(ctx, kb.ID, textID)
		for call, err := range calls {
			if data.ErrorCode(err) != data.ENOTFOUND {
				t.Errorf("%s, %s: %v, want not_found", name, call, err)
			}
		}
		if list, _, _ := e.svc.ListKnowledgeBases(ctx, data.PageRequest{}); len(list) != 0 {
			t.Errorf("%s lists %d knowledge bases, want none", name, len(list))
		}
	}
	got, err := e.svc.KnowledgeBase(e.ctx, kb.ID)
	if err != nil || got.Name != "Mine" || len(got.Texts) != 1 {
		t.Errorf("after the refused calls: %+v %v, want it unchanged", got, err)
	}
}

func TestKnowledgeIfMatch(t *testing.T) {
	e := newKBEnv(t, nil)
	kb, _ := e.svc.CreateKnowledgeBase(e.ctx, data.KnowledgeBaseCreate{Name: "Tagged"})
	stale := data.WithIfMatch(e.ctx, `"not-the-etag"`)
	if _, err := e.svc.UpdateKnowledgeBase(stale, kb.ID, data.KnowledgeBaseUpdate{Name: data.Opt[string]{Set: true, V: "New"}}); data.ErrorCode(err) != data.EPRECONDITION {
		t.Errorf("update with a stale If-Match: %v, want precondition_failed", err)
	}
	if err := e.svc.DeleteKnowledgeBase(stale, kb.ID); data.ErrorCode(err) != data.EPRECONDITION {
		t.Errorf("delete with a stale If-Match: %v, want precondition_failed", err)
	}
	current := data.WithIfMatch(e.ctx, data.ETagOf(kb))
	got, err := e.svc.UpdateKnowledgeBase(current, kb.ID, data.KnowledgeBaseUpdate{Name: data.Opt[string]{Set: true, V: "New"}})
	if err != nil || got.Name != "New" {
		t.Errorf("update with the current ETag: %+v %v", got, err)
	}
}

// The cached index follows this process's commits, and a fresh service builds the same
// from storage.
func TestKnowledgeIndexFollowsCommits(t *testing.T) {
	db := testkit.OpenEngine(t)
	all := servicesOn(t, db, db, nil)
	u := mustUser(t, all, "ix@example.com")
	ctx := ownerCtx(u.ID, u.PersonalWorkspaceID)
	svc := all.KnowledgeBases
	find := func(s *service.KnowledgeBaseService, kbID, query string) []string {
		t.Helper()
		chunks, err := s.QueryKnowledgeBase(ctx, kbID, data.KnowledgeQuery{Query: query})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range chunks {
			ids = append(ids, c.SourceID)
		}
		return ids
	}
	kb, _ := svc.CreateKnowledgeBase(ctx, data.KnowledgeBaseCreate{Name: "Shop", Texts: []data.TextInput{{Content: "Returns are free within 30 days."}}})
	if got := find(svc, kb.ID, "returns"); len(got) != 1 || got[0] != kb.Texts[0].ID {
		t.Fatalf("returns → %v, want the text", got)
	}
	// Built now: an add and a delete must reach it.
	added, err := svc.AddSources(ctx, kb.ID, data.SourcesAdd{Texts: []data.TextInput{{Content: "Shipping takes two days."}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := find(svc, kb.ID, "shipping"); len(got) != 1 || got[0] != added.Texts[1].ID {
		t.Errorf("shipping after the add → %v, want the new text", got)
	}
	if _, err := svc.DeleteSource(ctx, kb.ID, data.SourceTexts, kb.Texts[0].ID); err != nil {
		t.Fatal(err)
	}
	if got := find(svc, kb.ID, "returns"); len(got) != 0 {
		t.Errorf("returns after its source's delete → %v, want nothing", got)
	}
	fresh := servicesOn(t, db, db, nil).KnowledgeBases
	if got := find(fresh, kb.ID, "shipping"); len(got) != 1 || got[0] != added.Texts[1].ID {
		t.Errorf("a fresh service: shipping → %v, want the stored text", got)
	}
	if got := find(fresh, kb.ID, "returns"); len(got) != 0 {
		t.Errorf("a fresh service: returns → %v, want nothing", got)
	}
}

// Deleting a knowledge base, a workspace or a user (with its personal workspace) drops the
// retrieval indexes of what went with it.
func TestKnowledgeIndexesGoWithWhatIsDeleted(t *testing.T) {
	env := testkit.New(t, nil)
	svc := env.Svc
	u := mustUser(t, svc, "owner@example.com")
	personal := ownerCtx(u.ID, u.PersonalWorkspaceID)
	ws, err := svc.Workspaces.CreateWorkspace(personal, data.WorkspaceCreate{Name: "Team"})
	if err != nil {
		t.Fatal(err)
	}
	team := ownerCtx(u.ID, ws.ID)
	other := mustUser(t, svc, "other@example.com")
	otherCtx := ownerCtx(other.ID, other.PersonalWorkspaceID)
	query := func(ctx context.Context, name string) string {
		t.Helper()
		kb, err := svc.KnowledgeBases.CreateKnowledgeBase(ctx, data.KnowledgeBaseCreate{Name: name, Texts: texts(1)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.KnowledgeBases.QueryKnowledgeBase(ctx, kb.ID, data.KnowledgeQuery{Query: "text"}); err != nil {
			t.Fatal(err)
		}
		return kb.ID
	}
	own := query(personal, "Own")
	query(personal, "Own too")
	query(team, "Team")
	query(otherCtx, "Other")
	held := func(want int, after string) {
		t.Helper()
		if n := svc.KnowledgeBases.CachedIndexes(); n != want {
			t.Errorf("after %s: %d indexes held, want %d", after, n, want)
		}
	}
	held(4, "four queries")
	if err := svc.KnowledgeBases.DeleteKnowledgeBase(personal, own); err != nil {
		t.Fatal(err)
	}
	held(3, "deleting a knowledge base")
	if err := svc.Workspaces.DeleteWorkspace(team, ws.ID); err != nil {
		t.Fatal(err)
	}
	held(2, "deleting the team workspace")
	if err := svc.Users.DeleteUser(context.Background(), other.ID); err != nil {
		t.Fatal(err)
	}
	held(1, "deleting a user with its personal workspace")
}
