package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// seedEvents makes a user and n workspace.updated events in dir and returns their ids,
// oldest first, with the workspace id.
func seedEvents(t *testing.T, dir string, n int) ([]string, string) {
	db, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	u, err := cli.NewServices(db).Users.CreateUser(context.Background(), data.UserCreate{Name: "A", Email: "a@example.com", Password: "password123"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := data.WithPrincipal(context.Background(), &data.Principal{UserID: u.ID, WorkspaceID: u.PersonalWorkspaceID, Role: data.RoleOwner})
	for i := range n {
		if _, err := cli.NewServices(db).Workspaces.UpdateWorkspace(ctx, u.PersonalWorkspaceID, data.WorkspaceUpdate{Name: data.Some(strings.Repeat("x", i+1))}); err != nil {
			t.Fatal(err)
		}
	}
	list, _, err := cli.NewServices(db).Audit.ListAuditLog(ctx, data.AuditFilter{}, data.PageRequest{PerPage: 100})
	if err != nil || len(list) != n {
		t.Fatalf("%d events, %v", len(list), err)
	}
	ids := make([]string, n)
	for i, e := range list {
		ids[n-1-i] = e.ID
	}
	return ids, u.PersonalWorkspaceID
}

func runVerify(dir string, extra ...string) (string, error) {
	var out bytes.Buffer
	root := cli.NewRootCommand(&out, &out)
	root.SetArgs(append([]string{"audit", "verify", "--data", dir}, extra...))
	err := root.Execute()
	return out.String(), err
}

// tamper changes the stored database directly, as someone with the file would.
func tamper(t *testing.T, dir string, fn func(tx *bbolt.Tx) error) {
	db, err := bbolt.Open(dir+"/"+bolt.FileName, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
}

func TestAuditVerifyNamesEditedEvent(t *testing.T) {
	dir := t.TempDir()
	ids, ws := seedEvents(t, dir, 4)
	if out, err := runVerify(dir); err != nil || !strings.Contains(out, "ok: 4 events") {
		t.Fatalf("untouched chain: %v\n%s", err, out)
	}
	tamper(t, dir, func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("events"))
		var e map[string]any
		stored, _ := bolt.StoredEventJSON(ids[1], b.Get([]byte(ids[1])))
		json.Unmarshal(stored, &e)
		e["data"] = map[string]any{"name": "forged"}
		raw, _ := json.Marshal(e)
		return b.Put([]byte(ids[1]), raw)
	})
	out, err := runVerify(dir, "--workspace", ws)
	if err == nil || !strings.Contains(out, "event "+ids[1]+": its hash does not match") {
		t.Fatalf("edit of %s not named (err %v):\n%s", ids[1], err, out)
	}
	for _, other := range []string{ids[0], ids[2], ids[3]} {
		if strings.Contains(out, other) {
			t.Errorf("untouched event %s named:\n%s", other, out)
		}
	}
	if strings.Contains(out, "secret key") {
		t.Errorf("one edit blamed on the key:\n%s", out)
	}
}

func TestAuditVerifyNamesDeletedEvent(t *testing.T) {
	dir := t.TempDir()
	ids, ws := seedEvents(t, dir, 4)
	// Deleted from the events bucket only: the index still names it.
	tamper(t, dir, func(tx *bbolt.Tx) error { return tx.Bucket([]byte("events")).Delete([]byte(ids[1])) })
	out, err := runVerify(dir)
	if err == nil || !strings.Contains(out, "event "+ids[1]+": the event is listed") {
		t.Fatalf("deletion of %s not named (err %v):\n%s", ids[1], err, out)
	}
	// Deleted without a trace in the index as well: the next event's link names the gap,
	// and with it the id of the event before the gap.
	dir = t.TempDir()
	ids, ws = seedEvents(t, dir, 4)
	tamper(t, dir, func(tx *bbolt.Tx) error {
		if err := tx.Bucket([]byte("events")).Delete([]byte(ids[2])); err != nil {
			return err
		}
		return tx.Bucket([]byte("events_by_ws")).Delete([]byte(ws + "\x00" + ids[2]))
	})
	out, err = runVerify(dir)
	if err == nil || !strings.Contains(out, "event "+ids[3]+": its prev_hash does not match the hash of the event before it ("+ids[1]+")") {
		t.Fatalf("gap after %s not named (err %v):\n%s", ids[1], err, out)
	}
	// The newest event removed: the chain head no longer matches.
	dir = t.TempDir()
	ids, ws = seedEvents(t, dir, 3)
	tamper(t, dir, func(tx *bbolt.Tx) error {
		tx.Bucket([]byte("events")).Delete([]byte(ids[2]))
		return tx.Bucket([]byte("events_by_ws")).Delete([]byte(ws + "\x00" + ids[2]))
	})
	if out, err = runVerify(dir); err == nil || !strings.Contains(out, "the chain head does not match") {
		t.Fatalf("removal of the newest event not detected (err %v):\n%s", err, out)
	}
}

// An installation upgraded from an unkeyed chain: verify names every old link as not
// holding, rekey relinks them under the key once, and verify passes; an edited old chain
// is refused by rekey rather than laundered.
func TestAuditRekeyRelinksAnUnkeyedChain(t *testing.T) {
	dir := t.TempDir()
	ids, _ := seedEvents(t, dir, 3)
	unkey := func(edit bool) {
		tamper(t, dir, func(tx *bbolt.Tx) error {
			b, prev := tx.Bucket([]byte("events")), ""
			for i, id := range ids {
				var e data.Event
				stored, err := bolt.StoredEventJSON(id, b.Get([]byte(id)))
				if err != nil {
					return err
				}
				if err := json.Unmarshal(stored, &e); err != nil {
					return err
				}
				e.PrevHash = prev
				e.Hash = service.LegacyEventHash(&e)
				if edit && i == 1 {
					e.Data = json.RawMessage(`{"name":"forged"}`)
				}
				prev = e.Hash
				raw, _ := json.Marshal(&e)
				if err := b.Put([]byte(id), raw); err != nil {
					return err
				}
			}
			return tx.Bucket([]byte("event_heads")).ForEach(func(k, _ []byte) error {
				return tx.Bucket([]byte("event_heads")).Put(k, []byte(prev))
			})
		})
	}
	unkey(false)
	if out, err := runVerify(dir); err == nil {
		t.Fatalf("verify accepted unkeyed links:\n%s", out)
	}
	var out bytes.Buffer
	root := cli.NewRootCommand(&out, &out)
	root.SetArgs([]string{"audit", "rekey", "--data", dir})
	if err := root.Execute(); err != nil || !strings.Contains(out.String(), "ok: 3 events relinked") {
		t.Fatalf("rekey: %v\n%s", err, out.String())
	}
	if out, err := runVerify(dir); err != nil || !strings.Contains(out, "ok: 3 events") {
		t.Fatalf("verify after rekey: %v\n%s", err, out)
	}

	unkey(true) // an old chain with an edit that was never linked
	out.Reset()
	root = cli.NewRootCommand(&out, &out)
	root.SetArgs([]string{"audit", "rekey", "--data", dir})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "does not match its content") {
		t.Fatalf("rekey of an edited chain: %v\n%s", err, out.String())
	}
}

// TestAuditVerifyUnderAnotherKeySaysSo: run with another secret key than the one that
// wrote the chain, every event reads as edited; the output says the likelier cause (it
// named 13 "edited" events, met when a move to PostgreSQL ran under another key), while a
// single edit (TestAuditVerifyNamesEditedEvent) gets no such line.
func TestAuditVerifyUnderAnotherKeySaysSo(t *testing.T) {
	dir := t.TempDir()
	seedEvents(t, dir, 3)
	t.Setenv("VOICEAPI_SECRET_KEY", strings.Repeat("cd", 32))
	out, err := runVerify(dir)
	if err == nil || !strings.Contains(out, "3 problems in 3 events checked\nevery event's hash differs from its content: more likely than every event edited, the secret key this command was given") {
		t.Fatalf("verify under another key (err %v):\n%s", err, out)
	}
	t.Setenv("VOICEAPI_SECRET_KEY", "")
	if out, err := runVerify(dir); err != nil || strings.Contains(out, "secret key") {
		t.Fatalf("verify under its own key (err %v):\n%s", err, out)
	}
}
