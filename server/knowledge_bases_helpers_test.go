package server_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/server"
	"github.com/voiceapi/voiceapi/service"
)

// kbEnvOptions tune newKBEnv.
type kbEnvOptions struct {
	server  server.Config
	bolt    bolt.Options
	fetcher bool // start the job runner, which fetches url sources
}

// newKBEnv is newEnv with a server and database configured for knowledge base tests.
func newKBEnv(t testing.TB, o kbEnvOptions) *env {
	t.Helper()
	e, _ := newKBEnvServer(t, o)
	return e
}

// newKBEnvServer is newKBEnv that also returns what starts the job runner (url fetches)
// later; the stop it returns waits for the runner to stop.
func newKBEnvServer(t testing.TB, o kbEnvOptions) (*env, func(ctx context.Context) (stop func())) {
	t.Helper()
	dir := t.TempDir()
	logs := &testkit.SyncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	bo := o.bolt
	bo.PasswordCost, bo.NoSync, bo.Logger, bo.SecretKey = bcrypt.MinCost, true, logger, bytes.Repeat([]byte{7}, 32)
	db, err := bolt.Open(dir, bo)
	if err != nil {
		t.Fatal(err)
	}
	cfg := o.server
	cfg.Logger = logger
	svc := cli.NewServices(db)
	srv := server.New(cli.ServicesOn(db, svc), cfg)
	startJobs := func(ctx context.Context) (stop func()) {
		r := svc.Jobs.NewRunner(service.RunnerOptions{})
		r.Start(ctx)
		return func() { r.Stop(context.Background()) }
	}
	stop := func() {}
	if o.fetcher {
		stop = startJobs(context.Background())
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		stop()
		err := db.CheckConsistency()
		if err != nil {
			t.Errorf("consistency check: %v", err)
		}
		db.Close()
	})
	e := &env{t: t, DB: db, Bolt: db, URL: hs.URL, Logs: logs, Dir: dir}
	e.Owner = e.newUser("owner@example.com", true)
	return e, startJobs
}

// part is one part of a multipart body.
type part struct {
	name, filename string
	content        []byte
}

// multipartBody encodes parts and returns the body and its Content-Type.
func multipartBody(t testing.TB, parts ...part) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		cd := `form-data; name="` + p.name + `"`
		if p.filename != "" {
			cd += `; filename="` + p.filename + `"`
			h.Set("Content-Type", "application/octet-stream")
		}
		h.Set("Content-Disposition", cd)
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(p.content)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), mw.FormDataContentType()
}

// addParts posts a multipart sources/add request.
func (e *env) addParts(token, kbID string, parts ...part) *response {
	e.t.Helper()
	body, ct := multipartBody(e.t, parts...)
	return e.do("POST", "/api/v1/knowledge-bases/"+kbID+"/sources/add", token, body, "Content-Type", ct)
}

// createKB creates a knowledge base and returns its data.
func (e *env) createKB(token string, body map[string]any) map[string]any {
	e.t.Helper()
	r := e.do("POST", "/api/v1/knowledge-bases", token, body)
	expect(e.t, r, 201)
	return r.Data()
}

// kb returns a knowledge base's data.
func (e *env) kb(token, id string) map[string]any {
	e.t.Helper()
	r := e.do("GET", "/api/v1/knowledge-bases/"+id, token, nil)
	expect(e.t, r, 200)
	return r.Data()
}

// items returns the list of one source type of a record.
func items(kb map[string]any, typ string) []map[string]any {
	var out []map[string]any
	list, _ := kb[typ].([]any)
	for _, it := range list {
		out = append(out, it.(map[string]any))
	}
	return out
}

// storedFiles lists the regular files under the data directory's files/ tree.
func (e *env) storedFiles() []string {
	e.t.Helper()
	var out []string
	root := filepath.Join(e.Dir, "files")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// eventually polls cond for up to 30 s (a hang guard: it costs time only when broken).
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func sha256Of(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func readTestFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "knowledge", "testdata", "files", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// download fetches a url of the test server raw.
func (e *env) download(token, path string) (*http.Response, []byte) {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}
