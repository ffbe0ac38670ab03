package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// NotesWorkspace is the workspace whose answers StoreKeptAnswers keeps.
const NotesWorkspace = "ws_notes"

// StoreKeptAnswers keeps, under a token of NotesWorkspace, the answers an upgrade finds
// (bbolt schema 20, PostgreSQL 0031): one with status 201 naming no conversation (a
// start's kept before starts were noted, or another create's), and others it must not
// list (a 200, a 201 noted with its conversation, a message's answer); and one under a
// token that is gone. It returns the token and the one answer's key.
func StoreKeptAnswers(t *testing.T, s service.Store) (int64, string) {
	t.Helper()
	key := &data.APIKeyRecord{APIKey: data.APIKey{Name: "k"}, UserID: "usr_notes", WorkspaceID: NotesWorkspace, Kind: data.TokenAPIKey, SecretHash: []byte("s")}
	now := data.NewTime(time.Now())
	answer := func(status int, conv, started string) *data.IdempotentResponse {
		return &data.IdempotentResponse{RequestHash: "h", Status: status, Body: []byte("sealed"), CreatedAt: now, ConversationID: conv, StartedConversationID: started}
	}
	if err := s.Update(context.Background(), func(tx service.Tx) error {
		if err := tx.InsertAPIKey(key); err != nil {
			return err
		}
		for k, r := range map[string]*data.IdempotentResponse{
			"created": answer(201, "", ""), "read": answer(200, "", ""),
			"noted": answer(201, "", "conv_1"), "message": answer(201, "conv_2", ""),
		} {
			if err := tx.PutIdempotentResponse(key.ID, k, r); err != nil {
				return err
			}
		}
		return tx.PutIdempotentResponse(key.ID+1000, "created", answer(201, "", ""))
	}); err != nil {
		t.Fatal(err)
	}
	return key.ID, "created"
}

// CheckStartsListed holds that the upgrade listed exactly the answer of tokenID and key
// under NotesWorkspace for the job that notes starts.
func CheckStartsListed(t *testing.T, s service.Store, tokenID int64, key string) {
	t.Helper()
	if err := s.View(context.Background(), func(tx service.Tx) error {
		listed, err := tx.StartsToNote(NotesWorkspace, 10)
		if err != nil || len(listed) != 1 || listed[0].TokenID != tokenID || listed[0].Key != key {
			t.Errorf("listed by the upgrade: %+v, %v; want token %d's %q alone", listed, err, tokenID, key)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// CheckStartsUnlistedWithTheirWorkspace holds that deleting NotesWorkspace takes its
// answers off the list.
func CheckStartsUnlistedWithTheirWorkspace(t *testing.T, s service.Store) {
	t.Helper()
	if err := s.Update(context.Background(), func(tx service.Tx) error { return tx.DeleteWorkspace(NotesWorkspace) }); err != nil {
		t.Fatal(err)
	}
	if err := s.View(context.Background(), func(tx service.Tx) error {
		listed, err := tx.StartsToNote(NotesWorkspace, 10)
		if len(listed) != 0 {
			t.Errorf("listed after its workspace's delete: %+v", listed)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
