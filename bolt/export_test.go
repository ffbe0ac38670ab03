package bolt

import (
	"fmt"
	"testing"

	"go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// BulkWorkspaces makes n workspaces owned by ownerID in one transaction: a fast way to
// build a large collection for benchmarks.
func (db *DB) BulkWorkspaces(ownerID string, n int) error {
	return db.bolt.Update(func(b *bbolt.Tx) error {
		t := tx{db: db, b: b}
		for i := 0; i < n; i++ {
			id := db.ids.New(data.PrefixWorkspace)
			if err := t.PutWorkspace(&data.WorkspaceRecord{Workspace: data.Workspace{ID: id, Name: fmt.Sprint("bulk ", i)}}); err != nil {
				return err
			}
			m := &data.MemberRecord{UserID: ownerID, WorkspaceID: id, Role: data.RoleOwner, Modules: data.Modules, AgentIDs: []string{}}
			if err := t.PutMember(m); err != nil {
				return err
			}
		}
		return nil
	})
}

// servicesFor builds the service layer on db for the tests inside this package, which
// cannot import internal/testkit (it imports this package).
func servicesFor(t testing.TB, db *DB) *service.Services {
	t.Helper()
	svc, err := service.New(db, service.Options{Now: db.now, Sealer: db.sealer, PasswordCost: bcrypt.MinCost, Catalog: db.opts.Catalog, IDs: db.ids})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}
