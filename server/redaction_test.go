package server_test

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/server"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/webhook"
)

// bodies is a webhook receiver keeping every body it is sent.
type bodies struct {
	mu  sync.Mutex
	all []string
}

func (b *bodies) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	b.all = append(b.all, string(raw))
	b.mu.Unlock()
}

func (b *bodies) joined() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.all, "\n")
}

// TestRedactedCardIsWrittenNowhere registers and updates a call whose transcript, variables
// and analysis hold a card number (grouped, dashed, unbroken and spoken) and an e-mail
// address in a workspace that redacts them, with a webhook receiving every event. Then,
// with the server stopped and the database closed, it reads every byte of the data
// directory, the server's log and every webhook body: none holds the card or the address.
// A call of a workspace without redaction, in the same database, is found in the bytes:
// the search sees call content where there is some.
func TestRedactedCardIsWrittenNowhere(t *testing.T) {
	dir := t.TempDir()
	rs := startRedactionServer(t, dir)
	owner := testkit.NewAccount(t, rs.svc, "owner@example.com", true)
	plain := testkit.NewAccount(t, rs.svc, "plain@example.com", false)
	expect(t, rs.do("POST", "/api/v1/webhooks", owner.Token, map[string]any{"url": rs.recvURL, "events": []string{"*"}}), 201)
	expect(t, rs.do("PUT", "/api/v1/workspaces/"+owner.WorkspaceID, owner.Token, map[string]any{"privacy": map[string]any{
		"redaction": map[string]any{"detectors": []string{"card", "email"}}}}), 200)
	rs.sendRedactedCall(t, owner.Token)
	// A workspace without redaction keeps what it is sent.
	plainAgent := rs.do("POST", "/api/v1/agents", plain.Token, map[string]any{"name": "Plain"})
	expect(t, plainAgent, 201)
	expect(t, rs.do("POST", "/api/v1/calls", plain.Token, map[string]any{"agent_id": plainAgent.Data()["id"], "direction": "web",
		"transcript": []map[string]any{{"role": "user", "content": "card " + redactionControl, "start_ms": 0}}}), 201)

	waitFor(t, 30*time.Second, "the call's events at the webhook", func() bool {
		all := rs.recv.joined()
		return strings.Contains(all, `"call.analyzed"`) && strings.Contains(all, `"call.ended"`) && strings.Contains(all, `"call.registered"`)
	})
	rs.shutdown()
	rs.checkWrittenNowhere(t, dir)
}

// The card and address TestRedactedCardIsWrittenNowhere sends, a card of the workspace
// without redaction, and every form the card is sent in.
const (
	redactionCard    = "4012888888881881"
	redactionEmail   = "caller.private@example.org"
	redactionSpoken  = "four zero one two eight eight eight eight eight eight eight eight one eight eight one"
	redactionControl = "5555 5555 5555 4444"
)

var redactionForms = []string{redactionCard, "4012 8888 8888 1881", "4012-8888-8888-1881", redactionSpoken, redactionEmail}

// redactionServer is a server over a bbolt database in a directory of its own, logging
// at debug level, with a webhook dispatcher posting to recv.
type redactionServer struct {
	svc      *service.Services
	do       func(method, path, token string, body any, headers ...string) *response
	logs     *testkit.SyncBuffer
	recv     *bodies
	recvURL  string
	shutdown func() // stops everything and closes the database; once
}

// startRedactionServer starts a redactionServer over dir, shut down when the test ends
// if it was not before.
func startRedactionServer(t *testing.T, dir string) *redactionServer {
	t.Helper()
	logs := &testkit.SyncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	db, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, SecretKey: testkit.SecretKey, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	svc := cli.NewServices(db)
	hs := httptest.NewServer(cli.NewServerOn(db, svc, logger, func(c *server.Config) { c.AllowPrivateURLs = true }).Handler())
	recv := &bodies{}
	rcv := httptest.NewServer(recv)
	d := webhook.NewDispatcher(svc.Deliveries, webhook.Config{AllowPrivate: true, Workers: 2, Timeout: 30 * time.Second, // a hang guard
		Schedule: []time.Duration{10 * time.Millisecond}, Logger: logger})
	db.SetEventHook(d.Wake)
	d.Start(context.Background())
	closed := false
	shutdown := func() {
		if closed {
			return
		}
		closed = true
		db.SetEventHook(nil)
		d.Stop(context.Background())
		hs.Close()
		rcv.Close()
		db.Close()
	}
	t.Cleanup(shutdown)
	do := func(method, path, token string, body any, headers ...string) *response {
		t.Helper()
		return testkit.Request(t, hs.URL, method, path, token, body, headers...)
	}
	return &redactionServer{svc: svc, do: do, logs: logs, recv: recv, recvURL: rcv.URL, shutdown: shutdown}
}

// sendRedactedCall registers and updates a call whose transcript, variables and
// analysis hold the card in every form and the address; the answers show the markers.
func (rs *redactionServer) sendRedactedCall(t *testing.T, token string) {
	t.Helper()
	agent := rs.do("POST", "/api/v1/agents", token, map[string]any{"name": "Billing"})
	expect(t, agent, 201)
	agentID := agent.Data()["id"].(string)
	reg := rs.do("POST", "/api/v1/calls", token, map[string]any{
		"agent_id": agentID, "direction": "web", "status": "ongoing",
		"transcript": []map[string]any{{"role": "user", "content": "my card is 4012 8888 8888 1881 and mail " + redactionEmail, "start_ms": 0}},
		"variables":  map[string]any{"card": "4012-8888-8888-1881", "nested": []any{map[string]any{"pan": redactionCard}}},
	}, "Idempotency-Key", "register-1")
	expect(t, reg, 201)
	callID := reg.Data()["id"].(string)
	upd := rs.do("PUT", "/api/v1/calls/"+callID, token, map[string]any{
		"status":     "ended",
		"transcript": []map[string]any{{"role": "user", "content": "again: " + redactionSpoken, "start_ms": 10}},
		"analysis":   map[string]any{"summary": "paid with " + redactionCard},
	})
	expect(t, upd, 200)
	got, _ := json.Marshal(upd.Data())
	if !strings.Contains(string(got), "[card]") || !strings.Contains(string(reg.Body), "[email]") {
		t.Fatalf("the answers show no markers: %s / %s", reg.Body, got)
	}
}

// checkWrittenNowhere reads every byte of dir (values also read back decompressed),
// the server's log and every webhook body: none holds a form of the card or the
// address, while the database holds the control card and the markers.
func (rs *redactionServer) checkWrittenNowhere(t *testing.T, dir string) {
	t.Helper()
	var files int
	var everything strings.Builder
	err := filepath.WalkDir(dir, func(path string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		everything.Write(raw)
		return nil
	})
	if err != nil || files == 0 {
		t.Fatalf("reading %s: %d files, %v", dir, files, err)
	}
	// Values are stored deflated from 256 bytes on: the file's bytes would hide a raw
	// card in a compressed value, so every value is read back decompressed too.
	everything.WriteString(storedValues(t, filepath.Join(dir, bolt.FileName)))
	stored := everything.String()
	if !strings.Contains(stored, redactionControl) {
		t.Fatal("the control card of the workspace without redaction is not in the database bytes: the search is blind")
	}
	if !strings.Contains(stored, "[card]") {
		t.Fatal("no [card] marker in the database bytes")
	}
	for where, text := range map[string]string{"the database files": stored, "the server log": rs.logs.String(), "the webhook bodies": rs.recv.joined()} {
		if text == "" {
			t.Fatalf("%s are empty", where)
		}
		for _, f := range redactionForms {
			if strings.Contains(text, f) {
				t.Errorf("%s hold %q", where, f)
			}
		}
	}
	if !strings.Contains(rs.recv.joined(), "[card]") {
		t.Error("the webhook bodies hold no [card] marker")
	}
}

// storedValues returns every key and value of the bbolt file at path, values as stored
// records read back (decompressed), nested buckets included.
func storedValues(t *testing.T, path string) string {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out strings.Builder
	var walk func(name []byte, b *bbolt.Bucket) error
	walk = func(name []byte, b *bbolt.Bucket) error {
		return b.ForEach(func(k, v []byte) error {
			out.Write(k)
			if v == nil {
				return walk(k, b.Bucket(k))
			}
			plain, err := bolt.StoredJSON(v)
			if string(name) == "events" {
				plain, err = bolt.StoredEventJSON(string(k), v) // binary events too
			}
			if err != nil {
				plain = v // not a stored record (an index value): as it is
			}
			out.Write(plain)
			return nil
		})
	}
	err = db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error { return walk(name, b) })
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.String()
}
