package bolt_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
)

// filesUnder lists the regular files under the data directory's files/ tree.
func filesUnder(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(filepath.Join(dir, "files"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func openDir(t testing.TB, dir string) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, SecretKey: make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func principalCtx(userID, workspaceID string) context.Context {
	return data.WithPrincipal(context.Background(), &data.Principal{
		UserID: userID, WorkspaceID: workspaceID, CurrentWorkspaceID: workspaceID, Role: data.RoleOwner, Modules: data.Modules,
	})
}

// crashChild runs in the subprocess: it adds a file source and dies right after the file
// is renamed into place, before the metadata commits.
func crashChild(t *testing.T) {
	db := openDir(t, os.Getenv("VOICEAPI_CRASH_DIR"))
	bolt.SetTestHookBeforeSourceCommit(func() { os.Exit(3) })
	ctx := principalCtx(os.Getenv("VOICEAPI_CRASH_USER"), os.Getenv("VOICEAPI_CRASH_WS"))
	_, err := db.AddSources(ctx, os.Getenv("VOICEAPI_CRASH_KB"), data.SourcesAdd{Files: []data.FileUpload{{Filename: "notes.txt", Content: []byte("The crash test file.\n")}}})
	t.Logf("AddSources returned %v instead of stopping at the hook", err)
	os.Exit(4)
}

func TestKnowledgeCrashBetweenFileAndCommitLeavesNothing(t *testing.T) {
	if os.Getenv("VOICEAPI_CRASH_DIR") != "" {
		crashChild(t)
		return
	}
	dir := t.TempDir()
	db := openDir(t, dir)
	u := mustUser(t, db, "crash@example.com")
	ctx := asUser(t, db, u)
	kb, err := db.CreateKnowledgeBase(ctx, data.KnowledgeBaseCreate{Name: "Crash"})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestKnowledgeCrashBetweenFileAndCommitLeavesNothing$")
	cmd.Env = append(os.Environ(), "VOICEAPI_CRASH_DIR="+dir, "VOICEAPI_CRASH_KB="+kb.ID,
		"VOICEAPI_CRASH_USER="+u.ID, "VOICEAPI_CRASH_WS="+u.PersonalWorkspaceID)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("the child did not stop at the hook (%v): %s", err, out)
	}
	if files := filesUnder(t, dir); len(files) != 1 {
		t.Fatalf("the child should have left its renamed file behind, found %v", files)
	}

	db = openDir(t, dir)
	defer db.Close()
	got, err := db.KnowledgeBase(ctx, kb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Files) != 0 {
		t.Errorf("a half source survived the crash: %+v", got.Files)
	}
	if files := filesUnder(t, dir); len(files) != 0 {
		t.Errorf("orphan files survived the reopen: %v", files)
	}
}

func TestKnowledgeFilesGoWithTheirKnowledgeBaseAndWorkspace(t *testing.T) {
	db := openTestDB(t)
	u := mustUser(t, db, "files@example.com")
	ctx := asUser(t, db, u)
	ws, err := cli.NewServices(db).Workspaces.CreateWorkspace(ctx, data.WorkspaceCreate{Name: "Team"})
	if err != nil {
		t.Fatal(err)
	}
	wctx := principalCtx(u.ID, ws.ID)
	add := func(ctx context.Context, kbID string) {
		t.Helper()
		if _, err := db.AddSources(ctx, kbID, data.SourcesAdd{Files: []data.FileUpload{{Filename: "a.md", Content: []byte("# Title\n\nSome text.")}}}); err != nil {
			t.Fatal(err)
		}
	}
	kb1, _ := db.CreateKnowledgeBase(ctx, data.KnowledgeBaseCreate{Name: "One"})
	kb2, _ := db.CreateKnowledgeBase(wctx, data.KnowledgeBaseCreate{Name: "Two"})
	add(ctx, kb1.ID)
	add(wctx, kb2.ID)
	if n := len(filesUnder(t, db.Dir())); n != 2 {
		t.Fatalf("%d files stored, want 2", n)
	}
	if err := db.DeleteKnowledgeBase(ctx, kb1.ID); err != nil {
		t.Fatal(err)
	}
	if n := len(filesUnder(t, db.Dir())); n != 1 {
		t.Fatalf("%d files after deleting a knowledge base, want 1", n)
	}
	if err := cli.NewServices(db).Workspaces.DeleteWorkspace(wctx, ws.ID); err != nil {
		t.Fatal(err)
	}
	if f := filesUnder(t, db.Dir()); len(f) != 0 {
		t.Fatalf("files after deleting the workspace: %v", f)
	}
	if _, err := db.KnowledgeBase(wctx, kb2.ID); data.ErrorCode(err) != data.ENOTFOUND {
		t.Errorf("the workspace's knowledge base is still there: %v", err)
	}
}

func TestKnowledgeStaleURLResultIsDropped(t *testing.T) {
	db := openTestDB(t)
	u := mustUser(t, db, "stale@example.com")
	ctx := asUser(t, db, u)
	kb, err := db.CreateKnowledgeBase(ctx, data.KnowledgeBaseCreate{Name: "Web", URLs: []string{"https://example.com/a"}})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := db.PendingURLs(context.Background())
	if err != nil || len(jobs) != 1 || jobs[0].URL != "https://example.com/a" {
		t.Fatalf("pending: %v %v", jobs, err)
	}
	// A refetch while the first fetch runs: the first result must not win.
	if _, err := db.RefetchURL(ctx, kb.ID, jobs[0].SourceID); err != nil {
		t.Fatal(err)
	}
	old := jobs[0]
	if err := db.CompleteURL(context.Background(), old, data.FetchedURL{Body: []byte("old page text"), ContentType: "text/plain"}); err != nil {
		t.Fatal(err)
	}
	got, _ := db.KnowledgeBase(ctx, kb.ID)
	if got.URLs[0].Status != data.SourcePending {
		t.Fatalf("a stale result changed the source: %+v", got.URLs[0])
	}
	jobs, _ = db.PendingURLs(context.Background())
	if err := db.CompleteURL(context.Background(), jobs[0], data.FetchedURL{Err: errors.New("the server answered 500")}); err != nil {
		t.Fatal(err)
	}
	got, _ = db.KnowledgeBase(ctx, kb.ID)
	if got.URLs[0].Status != data.SourceFailed || got.URLs[0].Error == nil || *got.URLs[0].Error != "the server answered 500" {
		t.Fatalf("failed source: %+v", got.URLs[0])
	}
	if jobs, _ := db.PendingURLs(context.Background()); len(jobs) != 0 {
		t.Errorf("still pending: %v", jobs)
	}
}
