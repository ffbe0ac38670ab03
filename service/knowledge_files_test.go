package service_test

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
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
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
	db, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, SecretKey: testkit.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// crashingStore is the real store whose write transactions end the process before they
// begin: a crash between storing an add's files and committing its rows.
type crashingStore struct{ *bolt.DB }

func (crashingStore) Update(context.Context, func(service.Tx) error) error {
	os.Exit(3)
	return nil
}

// crashChild runs in the subprocess: it adds a file source and dies before the metadata
// commits.
func crashChild(t *testing.T) {
	db := openDir(t, os.Getenv("VOICEAPI_CRASH_DIR"))
	svc := servicesOn(t, crashingStore{db}, db, nil)
	ctx := ownerCtx(os.Getenv("VOICEAPI_CRASH_USER"), os.Getenv("VOICEAPI_CRASH_WS"))
	_, err := svc.KnowledgeBases.AddSources(ctx, os.Getenv("VOICEAPI_CRASH_KB"), data.SourcesAdd{Files: []data.FileUpload{{Filename: "notes.txt", Content: []byte("The crash test file.\n")}}})
	t.Logf("AddSources returned %v instead of stopping at the commit", err)
	os.Exit(4)
}

func TestKnowledgeCrashBetweenFileAndCommitLeavesNothing(t *testing.T) {
	if os.Getenv("VOICEAPI_CRASH_DIR") != "" {
		crashChild(t)
		return
	}
	dir := t.TempDir()
	db := openDir(t, dir)
	svc := servicesOn(t, db, db, nil)
	u := mustUser(t, svc, "crash@example.com")
	ctx := ownerCtx(u.ID, u.PersonalWorkspaceID)
	kb, err := svc.KnowledgeBases.CreateKnowledgeBase(ctx, data.KnowledgeBaseCreate{Name: "Crash"})
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
		t.Fatalf("the child did not stop at the commit (%v): %s", err, out)
	}
	if files := filesUnder(t, dir); len(files) != 1 {
		t.Fatalf("the child should have left its stored file behind, found %v", files)
	}

	db = openDir(t, dir)
	defer db.Close()
	got, err := servicesOn(t, db, db, nil).KnowledgeBases.KnowledgeBase(ctx, kb.ID)
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

func TestKnowledgeFilesGoWithTheirSourceKnowledgeBaseAndWorkspace(t *testing.T) {
	testkit.NeedBolt(t) // counts the files under the data directory (storetest's knowledge_file_lifecycle covers every engine)
	env := testkit.New(t, nil)
	db, kbs := env.DB, env.Svc.KnowledgeBases
	u := mustUser(t, env.Svc, "files@example.com")
	ctx := ownerCtx(u.ID, u.PersonalWorkspaceID)
	ws, err := env.Svc.Workspaces.CreateWorkspace(ctx, data.WorkspaceCreate{Name: "Team"})
	if err != nil {
		t.Fatal(err)
	}
	wctx := ownerCtx(u.ID, ws.ID)
	add := func(ctx context.Context, kbID string) *data.KnowledgeBase {
		t.Helper()
		kb, err := kbs.AddSources(ctx, kbID, data.SourcesAdd{Files: []data.FileUpload{{Filename: "a.md", Content: []byte("# Title\n\nSome text.")}}})
		if err != nil {
			t.Fatal(err)
		}
		return kb
	}
	kb1, _ := kbs.CreateKnowledgeBase(ctx, data.KnowledgeBaseCreate{Name: "One"})
	kb2, _ := kbs.CreateKnowledgeBase(wctx, data.KnowledgeBaseCreate{Name: "Two"})
	add(ctx, kb1.ID)
	got := add(ctx, kb1.ID)
	add(wctx, kb2.ID)
	if n := len(filesUnder(t, db.Dir())); n != 3 {
		t.Fatalf("%d files stored, want 3", n)
	}
	if _, err := kbs.DeleteSource(ctx, kb1.ID, data.SourceFiles, got.Files[0].ID); err != nil {
		t.Fatal(err)
	}
	if n := len(filesUnder(t, db.Dir())); n != 2 {
		t.Fatalf("%d files after deleting a file source, want 2", n)
	}
	if err := kbs.DeleteKnowledgeBase(ctx, kb1.ID); err != nil {
		t.Fatal(err)
	}
	if n := len(filesUnder(t, db.Dir())); n != 1 {
		t.Fatalf("%d files after deleting a knowledge base, want 1", n)
	}
	if err := env.Svc.Workspaces.DeleteWorkspace(wctx, ws.ID); err != nil {
		t.Fatal(err)
	}
	if f := filesUnder(t, db.Dir()); len(f) != 0 {
		t.Fatalf("files after deleting the workspace: %v", f)
	}
	if _, err := kbs.KnowledgeBase(wctx, kb2.ID); data.ErrorCode(err) != data.ENOTFOUND {
		t.Errorf("the workspace's knowledge base is still there: %v", err)
	}
}
