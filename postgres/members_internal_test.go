package postgres

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/service"
)

// openInternal opens the engine on a new database of the package's cluster.
func openInternal(t testing.TB) *DB {
	t.Helper()
	db, err := Open(context.Background(), Options{URL: migratedDatabase(t), PasswordCost: bcrypt.MinCost, SecretKey: make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// migratedDatabase is testkit.MigratedDatabase, which this package's internal tests
// cannot import: a copy of a database migrated once per test process.
func migratedDatabase(t testing.TB) string {
	t.Helper()
	return pgtest.DatabaseFrom(t, "migrated", func(url string) error {
		ctx := context.Background()
		pool, err := pgxpool.New(ctx, url)
		if err != nil {
			return err
		}
		defer pool.Close()
		_, err = Migrate(ctx, pool)
		return err
	})
}

// TestRemoveAgentFromMembers runs the agent delete hook alone (the storage suite's
// agent_delete_members runs it through DeleteAgent): the agent leaves every member's
// list of its workspace, an emptied list becomes data.NoAgent, other workspaces and
// null lists stay as they are.
func TestRemoveAgentFromMembers(t *testing.T) {
	db := openInternal(t)
	ctx := context.Background()
	const ws, other, agent = "ws_1", "ws_2", "agt_1"
	put := map[[2]string][]string{
		{ws, "usr_1"}: {agent}, {ws, "usr_2"}: {"agt_0", agent}, {ws, "usr_3"}: nil, {other, "usr_1"}: {agent},
	}
	err := db.Update(ctx, func(tx service.Tx) error {
		for k, ids := range put {
			if err := tx.PutMember(&data.MemberRecord{WorkspaceID: k[0], UserID: k[1], Role: data.RoleMember, AgentIDs: ids}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(ctx, func(stx service.Tx) error { return removeAgentFromMembers(stx.(*tx), ws, agent) }); err != nil {
		t.Fatal(err)
	}
	want := map[[2]string][]string{
		{ws, "usr_1"}: {data.NoAgent}, {ws, "usr_2"}: {"agt_0"}, {ws, "usr_3"}: nil, {other, "usr_1"}: {agent},
	}
	err = db.View(ctx, func(tx service.Tx) error {
		for k, ids := range want {
			m, err := tx.Member(k[0], k[1])
			if err != nil {
				return err
			}
			if !slices.Equal(m.AgentIDs, ids) || (ids == nil) != (m.AgentIDs == nil) {
				t.Errorf("%v agent_ids = %#v, want %#v", k, m.AgentIDs, ids)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestToucherFlushesOnClose checks that uses marked before Close are written, that a
// later use is never overwritten by an earlier one (two replicas flush independently),
// and that a revoked key is skipped.
func TestToucherFlushesOnClose(t *testing.T) {
	url := pgtest.Database(t)
	open := func() *DB {
		db, err := Open(context.Background(), Options{URL: url, PasswordCost: bcrypt.MinCost, SecretKey: make([]byte, 32)})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	ctx := context.Background()
	db := open()
	k := &data.APIKeyRecord{APIKey: data.APIKey{Name: "k"}, UserID: "usr_1", WorkspaceID: "ws_1", Kind: data.TokenAPIKey, SecretHash: []byte("s")}
	if err := db.Update(ctx, func(tx service.Tx) error { return tx.InsertAPIKey(k) }); err != nil {
		t.Fatal(err)
	}
	later := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	db.MarkAPIKeyUsed(k.ID, later)
	db.MarkAPIKeyUsed(k.ID, later.Add(-time.Hour)) // an earlier use marked late changes nothing
	db.MarkAPIKeyUsed(k.ID+1000, later)            // no such key
	db.Close()

	db = open()
	defer db.Close()
	db.MarkAPIKeyUsed(k.ID, later.Add(-time.Minute)) // another replica's older use
	db.touch.Flush()
	err := db.View(ctx, func(tx service.Tx) error {
		got, err := tx.APIKey(k.ID)
		if err != nil {
			return err
		}
		if got.LastUsedAt == nil || !got.LastUsedAt.Equal(later) {
			t.Errorf("last_used_at = %v, want %v", got.LastUsedAt, later)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// BenchmarkAuthRevisions measures what authenticating a cached token reads per request:
// the token's, its user's and its membership's revisions in one snapshot.
func BenchmarkAuthRevisions(b *testing.B) {
	db := openInternal(b)
	ctx := context.Background()
	k := &data.APIKeyRecord{APIKey: data.APIKey{Name: "k"}, UserID: "usr_1", WorkspaceID: "ws_1", Kind: data.TokenAPIKey, SecretHash: []byte("s")}
	err := db.Update(ctx, func(tx service.Tx) error {
		if err := tx.PutUser(&data.UserRecord{User: data.User{ID: "usr_1", Email: "a@example.com"}, PasswordHash: []byte("h")}); err != nil {
			return err
		}
		if err := tx.PutMember(&data.MemberRecord{WorkspaceID: "ws_1", UserID: "usr_1", Role: data.RoleOwner}); err != nil {
			return err
		}
		return tx.InsertAPIKey(k)
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		err := db.View(ctx, func(tx service.Tx) error {
			if _, err := tx.APIKeyRevision(k.ID); err != nil {
				return err
			}
			if _, err := tx.UserRevision("usr_1"); err != nil {
				return err
			}
			_, err := tx.MemberRevision("ws_1", "usr_1")
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
