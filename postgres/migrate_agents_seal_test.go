package postgres_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/service/storetest"
)

// An agent stored before migration 0028 keeps a credential header in the clear in its row
// and versions. The migration lists it, and the upgrade's job seals the header everywhere
// without an edit (storetest.CheckHeadersSealed): afterwards no stored config, row or
// version, holds the value, as on bbolt.
func TestMigrationListsAgentsForTheirHeadersSealing(t *testing.T) {
	pool := schemaAt(t, 27)
	ctx := context.Background()
	db := openMigrated(t, pool)
	id := storetest.StoreClearHeaders(t, db)
	db.Close()
	// As migration 27 left it: the agent stored, no list.
	if _, err := pool.Exec(ctx, `DROP TABLE agents_to_seal; DELETE FROM schema_migrations WHERE version = 28`); err != nil {
		t.Fatal(err)
	}
	db = openMigrated(t, pool)
	defer db.Close()
	if err := db.View(ctx, func(tx service.Tx) error {
		listed, err := tx.AgentsToSeal(storetest.SealWorkspace, 10)
		if err != nil || len(listed) != 1 || listed[0] != id {
			t.Errorf("listed by the migration: %v, %v; want [%s]", listed, err, id)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	raw := func() []byte {
		var all bytes.Buffer
		rows, err := pool.Query(ctx, `SELECT config::text FROM agents WHERE id = $1
			UNION ALL SELECT config::text FROM agent_versions WHERE agent_id = $1`, id)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var config string
			if err := rows.Scan(&config); err != nil {
				t.Fatal(err)
			}
			all.WriteString(config)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return all.Bytes()
	}
	storetest.CheckHeadersSealed(t, db, db.ServiceOptions(), id, raw)
}
