package bolt

import (
	"slices"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// A file written before owners and admins were never limited opens with them moved to the
// rule: the owner loses the limit, the admin keeps it as a developer with every module,
// and everyone else is left as stored. A second open changes nothing more.
func TestOpenUnlimitsOwnersAndAdmins(t *testing.T) {
	db, dir, opts := openFile(t)
	var err error
	limit := []string{"agt_01JD6000000000000000000001"}
	before := []*data.MemberRecord{
		{WorkspaceID: "ws_1", UserID: "usr_owner", Role: data.RoleOwner, Modules: data.Modules, AgentIDs: limit},
		{WorkspaceID: "ws_1", UserID: "usr_admin", Role: data.RoleAdmin, Modules: []string{data.ModuleAgents}, AgentIDs: limit},
		{WorkspaceID: "ws_1", UserID: "usr_free_admin", Role: data.RoleAdmin, Modules: data.Modules, AgentIDs: []string{}},
		{WorkspaceID: "ws_1", UserID: "usr_dev", Role: data.RoleDeveloper, Modules: []string{data.ModuleCallHistory}, AgentIDs: limit},
		{WorkspaceID: "ws_2", UserID: "usr_admin", Role: data.RoleAdmin, Modules: data.Modules, AgentIDs: []string{data.NoAgent}},
	}
	err = db.bolt.Update(func(b *bbolt.Tx) error {
		for _, m := range before {
			if err := putMember(b, m); err != nil {
				return err
			}
		}
		return b.Bucket(bucketMeta).Delete(membersUnlimitedKey) // as an older binary left it
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	want := map[string]data.MemberRecord{
		"ws_1/usr_owner":      {Role: data.RoleOwner, Modules: data.Modules, AgentIDs: []string{}},
		"ws_1/usr_admin":      {Role: data.RoleDeveloper, Modules: data.Modules, AgentIDs: limit},
		"ws_1/usr_free_admin": {Role: data.RoleAdmin, Modules: data.Modules, AgentIDs: []string{}},
		"ws_1/usr_dev":        {Role: data.RoleDeveloper, Modules: []string{data.ModuleCallHistory}, AgentIDs: limit},
		"ws_2/usr_admin":      {Role: data.RoleDeveloper, Modules: data.Modules, AgentIDs: []string{data.NoAgent}},
	}
	for round := range 2 {
		db, err = Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		db.bolt.View(func(b *bbolt.Tx) error {
			for _, m := range before {
				got, err := getMember(b, m.WorkspaceID, m.UserID)
				w := want[m.WorkspaceID+"/"+m.UserID]
				if err != nil || got == nil || got.Role != w.Role || !slices.Equal(got.Modules, w.Modules) || !slices.Equal(got.AgentIDs, w.AgentIDs) {
					t.Errorf("open %d: %s in %s is %+v (%v), want %+v", round+1, m.UserID, m.WorkspaceID, got, err, w)
				}
			}
			return nil
		})
		db.Close()
	}
}
