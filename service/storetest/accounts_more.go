package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// Time-ordered ids, oldest first, as the services make them.
var (
	usrIDs = []string{"usr_01JD6000000000000000000001", "usr_01JD6000000000000000000002", "usr_01JD6000000000000000000003"}
	wsIDs  = []string{"ws_01JD6000000000000000000001", "ws_01JD6000000000000000000002", "ws_01JD6000000000000000000003"}
)

func accountUser(id, email string) *data.UserRecord {
	return &data.UserRecord{User: data.User{ID: id, Name: "U " + id, Email: email, PersonalWorkspaceID: "ws_personal_" + id,
		CreatedAt: data.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC))}, PasswordHash: []byte("hash")}
}

func accountMember(ws, user, role string) *data.MemberRecord {
	return &data.MemberRecord{WorkspaceID: ws, UserID: user, Role: role, Modules: []string{data.ModuleAgents}, AgentIDs: []string{}}
}

func accountKey(user, ws, kind string) *data.APIKeyRecord {
	return &data.APIKeyRecord{APIKey: data.APIKey{Name: kind + " of " + user}, UserID: user, WorkspaceID: ws, Kind: kind, SecretHash: []byte("s")}
}

// testAccountLists checks the lists of accounts, members and tokens, their orders, and
// that what a record holds comes back as it went in (null and [] apart).
func testAccountLists(t *testing.T, open Opener) {
	s := open(t)
	k := newAccountListKeys()
	update(t, s, func(tx service.Tx) error {
		for i, id := range usrIDs {
			if err := tx.PutUser(accountUser(id, id+"@example.com")); err != nil {
				return err
			}
			if err := tx.PutWorkspace(&data.WorkspaceRecord{Workspace: data.Workspace{ID: wsIDs[i], Name: "W"}}); err != nil {
				return err
			}
			if err := tx.PutMember(accountMember(wsIDs[0], id, data.RoleMember)); err != nil {
				return err
			}
		}
		if err := tx.PutMember(&data.MemberRecord{WorkspaceID: wsIDs[1], UserID: usrIDs[0], Role: data.RoleOwner}); err != nil {
			return err
		}
		for _, key := range []*data.APIKeyRecord{k.full, k.narrow, k.other, k.login, k.elsewhere} {
			if err := tx.InsertAPIKey(key); err != nil {
				return err
			}
		}
		return nil
	})
	checkUserPages(t, s)
	checkMemberLists(t, s)
	checkKeyLists(t, s, k)
}

// accountListKeys are testAccountLists's tokens: a full API key, a narrowed one, another
// user's, a login token and a key in another workspace.
type accountListKeys struct {
	expires                               data.Time // the narrowed key's
	full, narrow, other, login, elsewhere *data.APIKeyRecord
}

// newAccountListKeys makes the tokens, none stored yet.
func newAccountListKeys() *accountListKeys {
	k := &accountListKeys{expires: data.NewTime(time.Date(2027, 5, 1, 0, 0, 0, 0, time.UTC))}
	k.full = accountKey(usrIDs[0], wsIDs[0], data.TokenAPIKey)
	k.narrow = accountKey(usrIDs[0], wsIDs[0], data.TokenAPIKey)
	k.narrow.Scopes, k.narrow.AgentIDs, k.narrow.ExpiresAt = []string{}, []string{"agt_1"}, &k.expires
	k.other = accountKey(usrIDs[1], wsIDs[0], data.TokenAPIKey)
	k.login = accountKey(usrIDs[0], wsIDs[0], data.TokenLogin)
	k.elsewhere = accountKey(usrIDs[0], wsIDs[1], data.TokenAPIKey)
	return k
}

// checkUserPages checks a user reads back and the users page newest first.
func checkUserPages(t *testing.T, s service.Store) {
	t.Helper()
	view(t, s, func(tx service.Tx) error {
		u, err := tx.User(usrIDs[0])
		if err != nil || u == nil || u.Name != "U "+usrIDs[0] || !u.CreatedAt.Equal(time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)) || u.PersonalWorkspaceID != "ws_personal_"+usrIDs[0] {
			t.Errorf("User = %+v, %v", u, err)
		}
		page, meta, err := tx.UserPage(data.PageRequest{PerPage: 2})
		if err != nil || len(page) != 2 || page[0].ID != usrIDs[2] || page[1].ID != usrIDs[1] || meta.NextCursor == nil {
			t.Fatalf("first page of users = %v, %+v, %v; want the two newest and a next cursor", page, meta, err)
		}
		rest, meta, err := tx.UserPage(data.PageRequest{PerPage: 2, Cursor: *meta.NextCursor})
		if err != nil || len(rest) != 1 || rest[0].ID != usrIDs[0] || meta.NextCursor != nil || meta.PrevCursor == nil {
			t.Errorf("second page of users = %v, %+v, %v", rest, meta, err)
		}
		return err
	})
}

// checkMemberLists checks the members of a workspace in both orders, their stored lists,
// a user's workspaces, every workspace, and the members counted.
func checkMemberLists(t *testing.T, s service.Store) {
	t.Helper()
	view(t, s, func(tx service.Tx) error {
		members, _, _ := tx.MemberPage(wsIDs[0], data.PageRequest{PerPage: 10})
		all, _ := tx.Members(wsIDs[0])
		if len(members) != 3 || members[0].UserID != usrIDs[2] || len(all) != 3 || all[0].UserID != usrIDs[0] {
			t.Errorf("MemberPage (newest first) %v, Members (oldest first) %v", members, all)
		}
		m, _ := tx.Member(wsIDs[0], usrIDs[1])
		if m == nil || m.Role != data.RoleMember || !slices.Equal(m.Modules, []string{data.ModuleAgents}) || m.AgentIDs == nil || len(m.AgentIDs) != 0 {
			t.Errorf("Member = %+v: want modules as stored and agent_ids [] (not null)", m)
		}
		if owner, _ := tx.Member(wsIDs[1], usrIDs[0]); owner == nil || owner.Modules != nil || owner.AgentIDs != nil {
			t.Errorf("a member stored with null lists = %+v, want them null", owner)
		}
		if ws, _ := tx.MemberWorkspaces(usrIDs[0]); !slices.Equal(ws, wsIDs[:2]) {
			t.Errorf("MemberWorkspaces = %v, want %v", ws, wsIDs[:2])
		}
		if list, _ := tx.AllWorkspaces(); len(list) != 3 || list[0].ID != wsIDs[0] || list[2].ID != wsIDs[2] {
			t.Errorf("AllWorkspaces = %v, want every workspace oldest first", list)
		}
		if n, _ := tx.CountUpTo(data.LimitWorkspaceUsers, wsIDs[0], -1); n != 3 {
			t.Errorf("CountUpTo(workspace_users, all) = %d, want 3", n)
		}
		if n, _ := tx.CountUpTo(data.LimitWorkspaceUsers, wsIDs[0], 2); n != 2 {
			t.Errorf("CountUpTo(workspace_users, up to 2) = %d, want 2", n)
		}
		return nil
	})
}

// checkKeyLists checks the API key pages of a user and of a workspace, a user's login
// tokens, and the narrowed and full keys as stored.
func checkKeyLists(t *testing.T, s service.Store, k *accountListKeys) {
	t.Helper()
	view(t, s, func(tx service.Tx) error {
		keys, _, _ := tx.APIKeyPage(usrIDs[0], data.PageRequest{PerPage: 10})
		if len(keys) != 3 || keys[0].ID != k.elsewhere.ID || keys[2].ID != k.full.ID {
			t.Errorf("APIKeyPage = %v, want the user's three API keys, newest first", keys)
		}
		wkeys, _, _ := tx.WorkspaceAPIKeyPage(wsIDs[0], data.PageRequest{PerPage: 10})
		if len(wkeys) != 3 || wkeys[0].ID != k.other.ID || wkeys[2].ID != k.full.ID {
			t.Errorf("WorkspaceAPIKeyPage = %v, want the workspace's three API keys (no login token), newest first", wkeys)
		}
		logins, _ := tx.UserTokens(usrIDs[0], data.TokenLogin)
		if len(logins) != 1 || logins[0].ID != k.login.ID {
			t.Errorf("UserTokens(login) = %v", logins)
		}
		nk, _ := tx.APIKey(k.narrow.ID)
		if nk == nil || nk.Scopes == nil || len(nk.Scopes) != 0 || !slices.Equal(nk.AgentIDs, []string{"agt_1"}) || nk.ExpiresAt == nil || !nk.ExpiresAt.Equal(k.expires.Time) || nk.LastUsedAt != nil {
			t.Errorf("a narrowed key = %+v: want scopes [] (no rights, not null), its agents and expiry", nk)
		}
		if fk, _ := tx.APIKey(k.full.ID); fk == nil || fk.Scopes != nil || fk.ExpiresAt != nil || string(fk.SecretHash) != "s" || fk.WorkspaceID != wsIDs[0] {
			t.Errorf("a full key = %+v: want scopes null", fk)
		}
		return nil
	})
}

// testAccountRevisions checks that revisions follow the rows, a membership removed and
// added back included.
func testAccountRevisions(t *testing.T, open Opener) {
	s := open(t)
	key := accountKey(usrIDs[0], wsIDs[0], data.TokenAPIKey)
	var memberRev, keyRev uint64
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutMember(accountMember(wsIDs[0], usrIDs[0], data.RoleMember)); err != nil {
			return err
		}
		if err := tx.InsertAPIKey(key); err != nil {
			return err
		}
		memberRev, _ = tx.MemberRevision(wsIDs[0], usrIDs[0])
		var err error
		keyRev, err = tx.APIKeyRevision(key.ID)
		return err
	})
	update(t, s, func(tx service.Tx) error {
		if err := tx.DeleteMember(wsIDs[0], usrIDs[0]); err != nil {
			return err
		}
		if rev, _ := tx.MemberRevision(wsIDs[0], usrIDs[0]); rev != 0 {
			t.Errorf("revision of a removed membership = %d, want 0", rev)
		}
		return tx.PutMember(accountMember(wsIDs[0], usrIDs[0], data.RoleAdmin))
	})
	view(t, s, func(tx service.Tx) error {
		rev, err := tx.MemberRevision(wsIDs[0], usrIDs[0])
		if rev == 0 || rev == memberRev {
			t.Errorf("revision of a membership added back with another role = %d (was %d): a cache would keep the old role", rev, memberRev)
		}
		if keyRev == 0 {
			t.Error("revision of a stored token is 0")
		}
		return err
	})
}

// testAccountDeletes checks what deleting a user takes with it, and that kept responses
// come back whole.
func testAccountDeletes(t *testing.T, open Opener) {
	s := open(t)
	keys := []*data.APIKeyRecord{accountKey(usrIDs[0], wsIDs[0], data.TokenAPIKey), accountKey(usrIDs[0], wsIDs[1], data.TokenLogin), accountKey(usrIDs[1], wsIDs[0], data.TokenAPIKey)}
	update(t, s, func(tx service.Tx) error {
		for _, id := range usrIDs[:2] {
			if err := tx.PutUser(accountUser(id, id+"@example.com")); err != nil {
				return err
			}
			for _, ws := range wsIDs[:2] {
				if err := tx.PutMember(accountMember(ws, id, data.RoleMember)); err != nil {
					return err
				}
			}
		}
		for _, k := range keys {
			if err := tx.InsertAPIKey(k); err != nil {
				return err
			}
		}
		return nil
	})
	update(t, s, func(tx service.Tx) error { return tx.DeleteUser(usrIDs[0]) })
	view(t, s, func(tx service.Tx) error {
		u, err := tx.User(usrIDs[0])
		byEmail, _ := tx.UserByEmail(usrIDs[0] + "@example.com")
		ws, _ := tx.MemberWorkspaces(usrIDs[0])
		if u != nil || byEmail != nil || len(ws) != 0 {
			t.Errorf("after DeleteUser: user %+v, by email %+v, memberships %v", u, byEmail, ws)
		}
		for _, k := range keys[:2] {
			if got, _ := tx.APIKey(k.ID); got != nil {
				t.Errorf("a deleted user's token %d survives", k.ID)
			}
		}
		if got, _ := tx.APIKey(keys[2].ID); got == nil {
			t.Error("another user's token went with the deleted user")
		}
		if m, _ := tx.Members(wsIDs[0]); len(m) != 1 || m[0].UserID != usrIDs[1] {
			t.Errorf("members left: %v", m)
		}
		if n, _ := tx.CountUsers(); n != 1 {
			t.Errorf("CountUsers = %d, want 1", n)
		}
		return err
	})
	kept := &data.IdempotentResponse{RequestHash: "rh", Status: 201, Header: map[string]string{"Location": "/x"}, Body: []byte(`{"id":1}`), CreatedAt: data.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)), ClaimID: "claim-1"}
	update(t, s, func(tx service.Tx) error { return tx.PutIdempotentResponse(7, "k\xff", kept) })
	view(t, s, func(tx service.Tx) error {
		r, err := tx.IdempotentResponse(7, "k\xff")
		if r == nil || r.RequestHash != "rh" || r.Status != 201 || r.Header["Location"] != "/x" || string(r.Body) != `{"id":1}` || !r.CreatedAt.Equal(kept.CreatedAt.Time) || r.ClaimID != "claim-1" {
			t.Errorf("kept response = %+v, %v", r, err)
		}
		if r, _ := tx.IdempotentResponse(8, "k\xff"); r != nil {
			t.Error("another token's key finds the response")
		}
		return err
	})
}
