package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func testAccounts(t *testing.T, open Opener) {
	s := open(t)
	u := &data.UserRecord{User: data.User{ID: "usr_1", Name: "A", Email: "a@example.com", PersonalWorkspaceID: "ws_1"}, PasswordHash: []byte("h")}
	w := &data.WorkspaceRecord{Workspace: data.Workspace{ID: "ws_1", Name: "A's"}, PersonalOf: "usr_1"}
	m := &data.MemberRecord{UserID: "usr_1", WorkspaceID: "ws_1", Role: data.RoleOwner, Modules: data.Modules, AgentIDs: []string{}}
	key := &data.APIKeyRecord{APIKey: data.APIKey{Name: "k"}, UserID: "usr_1", WorkspaceID: "ws_1", Kind: data.TokenAPIKey, SecretHash: []byte("s")}
	login := &data.APIKeyRecord{APIKey: data.APIKey{Name: "login"}, UserID: "usr_1", WorkspaceID: "ws_1", Kind: data.TokenLogin, SecretHash: []byte("s")}
	var userRev, keyRev uint64
	update(t, s, func(tx service.Tx) error {
		for _, step := range []func() error{
			func() error { return tx.PutUser(u) },
			func() error { return tx.PutWorkspace(w) },
			func() error { return tx.PutMember(m) },
			func() error { return tx.InsertAPIKey(key) },
			func() error { return tx.InsertAPIKey(login) },
		} {
			if err := step(); err != nil {
				return err
			}
		}
		var err error
		userRev, _ = tx.UserRevision("usr_1")
		keyRev, err = tx.APIKeyRevision(key.ID)
		return err
	})
	if key.ID == 0 || login.ID == key.ID {
		t.Fatalf("token ids %d and %d: want distinct ids assigned by the store", key.ID, login.ID)
	}
	checkAccountsStored(t, s, key.ID, userRev, keyRev)
	checkUserChangedMemberRemoved(t, s, u, key.ID, userRev)
	checkKeptResponsesExpire(t, s)
	checkConversationResponsesDeleted(t, s)
	checkConversationStartResponses(t, s)
}

// checkAccountsStored reads the stored user back: by email, its API keys (not its login
// token), its workspaces, the count of users, and the revisions taken when stored.
func checkAccountsStored(t *testing.T, s service.Store, keyID int64, userRev, keyRev uint64) {
	t.Helper()
	view(t, s, func(tx service.Tx) error {
		got, err := tx.UserByEmail("a@example.com")
		if err != nil || got == nil || got.ID != "usr_1" || string(got.PasswordHash) != "h" {
			t.Errorf("UserByEmail = %+v, %v", got, err)
		}
		keys, _, err := tx.APIKeyPage("usr_1", data.PageRequest{PerPage: 10})
		if err != nil || len(keys) != 1 || keys[0].ID != keyID {
			t.Errorf("APIKeyPage lists %v (%v), want the API key only, not the login token", keys, err)
		}
		ws, _, err := tx.WorkspacePage("usr_1", data.PageRequest{PerPage: 10})
		if err != nil || len(ws) != 1 || ws[0].PersonalOf != "usr_1" {
			t.Errorf("WorkspacePage = %v, %v", ws, err)
		}
		if n, _ := tx.CountUsers(); n != 1 {
			t.Errorf("CountUsers = %d", n)
		}
		if userRev == 0 || keyRev == 0 {
			t.Errorf("revisions of stored rows are 0 (user %d, key %d)", userRev, keyRev)
		}
		return err
	})
}

// checkUserChangedMemberRemoved changes u's email and removes its membership: a change
// moves the email index and the revision (userRev before); removing a member revokes
// its tokens in that workspace.
func checkUserChangedMemberRemoved(t *testing.T, s service.Store, u *data.UserRecord, keyID int64, userRev uint64) {
	t.Helper()
	update(t, s, func(tx service.Tx) error {
		u.Email = "b@example.com"
		if err := tx.PutUser(u); err != nil {
			return err
		}
		return tx.DeleteMember("ws_1", "usr_1")
	})
	view(t, s, func(tx service.Tx) error {
		if old, _ := tx.UserByEmail("a@example.com"); old != nil {
			t.Error("the old email still finds the user")
		}
		if rev, _ := tx.UserRevision("usr_1"); rev == userRev {
			t.Error("the user's revision did not change with the user")
		}
		if k, _ := tx.APIKey(keyID); k != nil {
			t.Error("a removed member's token survives")
		}
		if rev, _ := tx.APIKeyRevision(keyID); rev != 0 {
			t.Errorf("revision of a deleted token = %d, want 0", rev)
		}
		return nil
	})
}

// checkKeptResponsesExpire checks that kept responses expire by their creation time.
func checkKeptResponsesExpire(t *testing.T, s service.Store) {
	t.Helper()
	old := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutIdempotentResponse(1, "a", &data.IdempotentResponse{Status: 201, CreatedAt: data.NewTime(old)}); err != nil {
			return err
		}
		return tx.PutIdempotentResponse(1, "b", &data.IdempotentResponse{Status: 201, CreatedAt: data.NewTime(old.Add(time.Hour))})
	})
	update(t, s, func(tx service.Tx) error {
		n, err := tx.DeleteIdempotentResponsesBefore(old.Add(time.Minute), 10)
		if n != 1 {
			t.Errorf("deleted %d kept responses, want 1", n)
		}
		return err
	})
	view(t, s, func(tx service.Tx) error {
		if r, _ := tx.IdempotentResponse(1, "b"); r == nil || r.Status != 201 {
			t.Errorf("the fresh response is gone: %+v", r)
		}
		return nil
	})
}

// checkConversationResponsesDeleted checks that the responses kept for a conversation's
// messages, under any token, go with DeleteConversationResponses, and nothing else does;
// and that a response expired meanwhile leaves nothing behind for it.
func checkConversationResponsesDeleted(t *testing.T, s service.Store) {
	t.Helper()
	at := data.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	put := func(tx service.Tx, token int64, key, conv string) error {
		return tx.PutIdempotentResponse(token, key, &data.IdempotentResponse{Status: 200, CreatedAt: at, ConversationID: conv})
	}
	update(t, s, func(tx service.Tx) error {
		for _, r := range []struct {
			token     int64
			key, conv string
		}{{1, "m1", "conv_a"}, {2, "m2", "conv_a"}, {1, "m3", "conv_ab"}, {1, "other", ""}, {3, "m1", "conv_b"}} {
			if err := put(tx, r.token, r.key, r.conv); err != nil {
				return err
			}
		}
		return nil
	})
	update(t, s, func(tx service.Tx) error {
		if r, err := tx.IdempotentResponse(2, "m2"); err != nil || r == nil || r.ConversationID != "conv_a" {
			t.Errorf("a kept response reads %+v, %v: want its conversation", r, err)
		}
		n, err := tx.DeleteConversationResponses("conv_a")
		if n != 2 {
			t.Errorf("deleted %d responses of conv_a, want 2", n)
		}
		return err
	})
	view(t, s, func(tx service.Tx) error {
		for _, k := range []struct {
			token int64
			key   string
			kept  bool
		}{{1, "m1", false}, {2, "m2", false}, {1, "m3", true}, {1, "other", true}, {3, "m1", true}} {
			if r, _ := tx.IdempotentResponse(k.token, k.key); (r != nil) != k.kept {
				t.Errorf("response (%d, %s) kept: %v, want %v", k.token, k.key, r != nil, k.kept)
			}
		}
		return nil
	})
	// Expired, its key used again for a message to another conversation: the end of the
	// first conversation deletes nothing (an expired response leaves no trace of it).
	update(t, s, func(tx service.Tx) error {
		if _, err := tx.DeleteIdempotentResponsesBefore(at.Add(time.Minute), 100); err != nil {
			return err
		}
		if err := put(tx, 3, "m1", "conv_c"); err != nil {
			return err
		}
		n, err := tx.DeleteConversationResponses("conv_b")
		if n != 0 {
			t.Errorf("deleted %d responses of conv_b after they expired, want 0", n)
		}
		return err
	})
	view(t, s, func(tx service.Tx) error {
		if r, _ := tx.IdempotentResponse(3, "m1"); r == nil || r.ConversationID != "conv_c" {
			t.Errorf("the key's response to another conversation: %+v", r)
		}
		return nil
	})
}

// checkConversationStartResponses checks that the responses kept for a conversation's
// start, under any token, are found by ConversationStartResponses with their token and
// key, and nothing else is; that DeleteConversationResponses (its messages') leaves them;
// and that one expired is found no more, its key used again for another start found
// under that one's conversation.
func checkConversationStartResponses(t *testing.T, s service.Store) {
	t.Helper()
	at := data.NewTime(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC))
	update(t, s, func(tx service.Tx) error {
		for _, r := range []struct {
			token            int64
			key, conv, start string
		}{{1, "s1", "", "conv_s"}, {2, "s\x00two", "", "conv_s"}, {1, "s3", "", "conv_st"}, {1, "m1", "conv_s", ""}, {1, "plain", "", ""}} {
			if err := tx.PutIdempotentResponse(r.token, r.key, &data.IdempotentResponse{Status: 201, CreatedAt: at, Body: []byte(r.key),
				ConversationID: r.conv, StartedConversationID: r.start}); err != nil {
				return err
			}
		}
		_, err := tx.DeleteConversationResponses("conv_s")
		return err
	})
	found := func(conv string) []string {
		t.Helper()
		var out []string
		view(t, s, func(tx service.Tx) error {
			kept, err := tx.ConversationStartResponses(conv)
			for _, k := range kept {
				if k.Response.StartedConversationID != conv || string(k.Response.Body) != k.Key && k.Response.Status != 0 {
					t.Errorf("%s's start responses hold %+v under (%d, %q)", conv, k.Response, k.TokenID, k.Key)
				}
				out = append(out, fmt.Sprintf("%d/%s", k.TokenID, k.Key))
			}
			return err
		})
		slices.Sort(out)
		return out
	}
	if got := found("conv_s"); !slices.Equal(got, []string{"1/s1", "2/s\x00two"}) {
		t.Errorf("conv_s's start responses: %q, want 1/s1 and 2/s\\x00two", got)
	}
	// A start's answer cut to its claim (a deleted conversation's, service's
	// deleteConversation) reads back as the claim: no status, body or headers, the same
	// conversation and time, still found under the conversation.
	update(t, s, func(tx service.Tx) error {
		return tx.PutIdempotentResponse(2, "s\x00two", &data.IdempotentResponse{RequestHash: "h", ClaimID: "c", CreatedAt: at,
			StartedConversationID: "conv_s"})
	})
	view(t, s, func(tx service.Tx) error {
		r, err := tx.IdempotentResponse(2, "s\x00two")
		if err == nil && (r == nil || r.Status != 0 || len(r.Body) != 0 || r.Header != nil || r.RequestHash != "h" ||
			r.StartedConversationID != "conv_s" || !r.CreatedAt.Equal(at.Time)) {
			t.Errorf("a start's answer cut to its claim reads back as %+v", r)
		}
		return err
	})
	if got := found("conv_s"); !slices.Equal(got, []string{"1/s1", "2/s\x00two"}) {
		t.Errorf("conv_s's start responses, one cut to its claim: %q, want 1/s1 and 2/s\\x00two", got)
	}
	update(t, s, func(tx service.Tx) error {
		if _, err := tx.DeleteIdempotentResponsesBefore(at.Add(time.Minute), 100); err != nil {
			return err
		}
		return tx.PutIdempotentResponse(1, "s1", &data.IdempotentResponse{Status: 201, CreatedAt: data.NewTime(at.Add(time.Hour)), Body: []byte("s1"),
			StartedConversationID: "conv_u"})
	})
	if got := found("conv_s"); len(got) != 0 {
		t.Errorf("conv_s's start responses after they expired: %q, want none", got)
	}
	if got := found("conv_u"); !slices.Equal(got, []string{"1/s1"}) {
		t.Errorf("conv_u's start responses: %q, want 1/s1", got)
	}
}
