package storetest

import (
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// testPutAPIKey: a token put under its own id (a moved installation) is read back and
// listed like an inserted one, and the next inserted token gets a greater id.
func testPutAPIKey(t *testing.T, open Opener) {
	s := open(t)
	moved := &data.APIKeyRecord{APIKey: data.APIKey{ID: 41, Name: "moved"}, UserID: "usr_1", WorkspaceID: "ws_1", Kind: data.TokenAPIKey, SecretHash: []byte{1, 2}}
	update(t, s, func(tx service.Tx) error { return tx.PutAPIKey(moved) })
	fresh := &data.APIKeyRecord{APIKey: data.APIKey{Name: "fresh"}, UserID: "usr_1", WorkspaceID: "ws_1", Kind: data.TokenAPIKey}
	update(t, s, func(tx service.Tx) error { return tx.InsertAPIKey(fresh) })
	if fresh.ID <= moved.ID {
		t.Errorf("inserted token id %d, want more than the moved token's %d", fresh.ID, moved.ID)
	}
	view(t, s, func(tx service.Tx) error {
		k, err := tx.APIKey(41)
		if err != nil || k == nil || k.Name != "moved" || string(k.SecretHash) != "\x01\x02" {
			t.Errorf("moved token read back as %+v, %v", k, err)
		}
		keys, err := tx.UserTokens("usr_1", data.TokenAPIKey)
		if err != nil || len(keys) != 2 {
			t.Errorf("user's tokens: %d, %v; want the moved and the fresh one", len(keys), err)
		}
		page, _, err := tx.WorkspaceAPIKeyPage("ws_1", data.PageRequest{})
		if err != nil || len(page) != 2 || page[0].ID != fresh.ID {
			t.Errorf("workspace's tokens: %v, %v; want the fresh one first", page, err)
		}
		return nil
	})
}
