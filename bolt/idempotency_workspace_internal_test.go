package bolt

import (
	"context"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// TestWorkspaceListLeavesWithItsAnswer: an answer's entry under the workspace its request
// acted in stays while the answer is kept, claim or not, and goes when the answer is
// deleted with its conversation, its token or the workspace, or purged. The deletes pass
// over an entry whose answer is gone, so only the bucket tells: an entry left behind by
// each purged answer would grow it without end.
func TestWorkspaceListLeavesWithItsAnswer(t *testing.T) {
	db, _, _ := openFile(t)
	defer db.Close()
	const ws = "ws_01JD6000000000000000000001"
	at := data.NewTime(time.Now())
	update := func(fn func(tx service.Tx) error) {
		t.Helper()
		if err := db.Update(context.Background(), fn); err != nil {
			t.Fatal(err)
		}
	}
	keep := func(status int) {
		update(func(tx service.Tx) error {
			return tx.PutIdempotentResponse(7, "turn", &data.IdempotentResponse{Status: status, Body: []byte("words"), CreatedAt: at,
				ConversationID: "conv_1", WorkspaceID: ws})
		})
	}
	entries := func(after string, want int) {
		t.Helper()
		n := 0
		if err := db.bolt.View(func(tx *bbolt.Tx) error {
			n = tx.Bucket(bucketIdempotencyByWorkspace).Stats().KeyN
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Errorf("after %s: %d entries under workspaces, want %d", after, n, want)
		}
	}
	keep(200)
	entries("an answer kept", 1)
	keep(0)
	entries("its cut to its claim", 1)
	update(func(tx service.Tx) error { _, err := tx.DeleteConversationResponses("conv_1"); return err })
	entries("its conversation's answers deleted", 0)
	keep(200)
	update(func(tx service.Tx) error { _, err := tx.DeleteTokenResponses(7, 100); return err })
	entries("its token's answers deleted", 0)
	keep(200)
	update(func(tx service.Tx) error {
		_, _, err := tx.DeleteWorkspaceResponses(ws, 0, time.Time{}, nil, 100)
		return err
	})
	entries("the workspace's answers deleted", 0)
	keep(200)
	update(func(tx service.Tx) error {
		_, err := tx.DeleteIdempotentResponsesBefore(at.Add(time.Hour), 100)
		return err
	})
	entries("the purge", 0)
}

// A schema 22 file has no list of answers by workspace, and its answers name none.
// Opening it (schema 24) creates the list, lists none of them (nothing knows where they
// were made: they go with their token, or expire), and keeps them replayable; an answer
// kept after is listed, and a workspace's delete takes it.
func TestUpgradeKeepsOlderAnswersUnlistedByWorkspace(t *testing.T) {
	db, dir, opts := openFile(t)
	const ws = "ws_01JD6000000000000000000001"
	at := data.NewTime(time.Now())
	if err := db.Update(context.Background(), func(tx service.Tx) error {
		return tx.PutIdempotentResponse(7, "before", &data.IdempotentResponse{Status: 201, Body: []byte("before"), CreatedAt: at})
	}); err != nil {
		t.Fatal(err)
	}
	db = asOlderFile(t, db, dir, opts, 22, bucketIdempotencyByWorkspace)
	defer db.Close()
	if v, err := db.SchemaVersion(); err != nil || v != schemaVersion {
		t.Fatalf("schema version %d, %v; want %d", v, err, schemaVersion)
	}
	if err := db.Update(context.Background(), func(tx service.Tx) error {
		return tx.PutIdempotentResponse(7, "after", &data.IdempotentResponse{Status: 201, Body: []byte("after"), CreatedAt: at, WorkspaceID: ws})
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(context.Background(), func(tx service.Tx) error {
		if n, _, err := tx.DeleteWorkspaceResponses(ws, 0, time.Time{}, nil, 100); err != nil || n != 1 {
			t.Errorf("the workspace's delete took %d (%v); want the answer kept after the upgrade", n, err)
		}
		r, err := tx.IdempotentResponse(7, "before")
		if r == nil || string(r.Body) != "before" {
			t.Errorf("the answer kept before the upgrade: %+v; want it kept", r)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
