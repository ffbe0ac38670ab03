package bolt_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// filesUnder lists the regular files under the data directory's files/ tree, relative to it.
func filesUnder(t testing.TB, dir string) []string {
	t.Helper()
	root := filepath.Join(dir, "files")
	var out []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(out)
	return out
}

func openDir(t testing.TB, dir string) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true, SecretKey: make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// A file is stored before its source row commits; Open removes every file without a
// committed file source: never committed, deleted, half written, or of a gone knowledge
// base.
func TestKnowledgeOpenSweepsFilesWithoutTheirSource(t *testing.T) {
	const (
		ws      = "ws_01JAAAAAAAAAAAAAAAAAAAAAAA"
		kb      = "kb_01JAAAAAAAAAAAAAAAAAAAAAAA"
		goneKB  = "kb_01JBBBBBBBBBBBBBBBBBBBBBBB"
		kept    = "src_01JAAAAAAAAAAAAAAAAAAAAAAA"
		orphan  = "src_01JBBBBBBBBBBBBBBBBBBBBBBB"
		notFile = "src_01JCCCCCCCCCCCCCCCCCCCCCCC"
	)
	dir := t.TempDir()
	db := openDir(t, dir)
	ctx := context.Background()
	for _, f := range []struct{ kb, src string }{{kb, kept}, {kb, orphan}, {kb, notFile}, {goneKB, kept}} {
		if err := db.PutSourceFile(ctx, ws, f.kb, f.src, strings.NewReader("bytes of "+f.src)); err != nil {
			t.Fatal(err)
		}
	}
	err := db.Update(ctx, func(tx service.Tx) error {
		if err := tx.InsertKnowledgeBase(&data.KnowledgeBase{ID: kb, Name: "Files", WorkspaceID: ws}); err != nil {
			return err
		}
		if err := tx.PutKnowledgeSource(&data.KnowledgeSource{ID: kept, Type: data.SourceFiles, KnowledgeBaseID: kb, WorkspaceID: ws, Status: data.SourceIndexed}); err != nil {
			return err
		}
		return tx.PutKnowledgeSource(&data.KnowledgeSource{ID: notFile, Type: data.SourceTexts, KnowledgeBaseID: kb, WorkspaceID: ws, Content: "x", Status: data.SourceIndexed})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "files", ws, kb, ".tmp-"+kept+"-123"), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db = openDir(t, dir)
	defer db.Close()
	if got, want := filesUnder(t, dir), []string{ws + "/" + kb + "/" + kept}; !slices.Equal(got, want) {
		t.Errorf("files after the reopen = %v, want only %v", got, want)
	}
	f, err := db.OpenSourceFile(ctx, ws, kb, kept)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}
