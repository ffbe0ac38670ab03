package bolt

import (
	"bytes"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/service/storetest"
)

// A schema 15 file holds an agent whose row and versions keep a credential header in the
// clear. Opening it (schema 16) lists the agent, and the upgrade's job seals the header
// everywhere, without an edit (storetest.CheckHeadersSealed): afterwards no record of the
// agents' buckets, inflated, holds the value.
func TestHeadersStoredInTheClearAreSealedByTheUpgrade(t *testing.T) {
	db, dir, opts := openFile(t)
	id := storetest.StoreClearHeaders(t, db)
	db = asOlderFile(t, db, dir, opts, 15, bucketAgentsToSeal)
	defer db.Close()
	if err := db.View(t.Context(), func(tx service.Tx) error {
		listed, err := tx.AgentsToSeal(storetest.SealWorkspace, 10)
		if err != nil || len(listed) != 1 || listed[0] != id {
			t.Errorf("listed by the upgrade: %v, %v; want [%s]", listed, err, id)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	raw := func() []byte {
		var all bytes.Buffer
		if err := db.bolt.View(func(tx *bbolt.Tx) error {
			for _, name := range [][]byte{bucketAgents, bucketAgentVersions} {
				if err := tx.Bucket(name).ForEach(func(_, v []byte) error {
					plain, err := decodeValue(v)
					all.Write(plain)
					return err
				}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return all.Bytes()
	}
	storetest.CheckHeadersSealed(t, db, db.ServiceOptions(), id, raw)
}
