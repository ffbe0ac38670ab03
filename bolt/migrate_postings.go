package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"go.etcd.io/bbolt"
)

// postingMoveBatch is how many old postings one transaction of migratePostings moves: a
// file of a million calls holds tens of millions, too many dirty pages for one
// transaction.
var postingMoveBatch = 200_000

// migratePostings moves the postings of a schema 2 file (bucketCallPostings, one key a
// posting: "<ws>/t/<term>\x00<call id>" → frequency) into posting blocks, a batch a
// transaction, each batch deleting what it moved: a start that stops halfway resumes where
// it was, and a posting moved twice is set twice to the same frequency. The old bucket is
// dropped once empty. It runs before init, and does nothing to a file whose schema is
// newer than this code's (init refuses it).
func migratePostings(bdb *bbolt.DB) error {
	for {
		moved, err := movePostings(bdb)
		if err != nil {
			return fmt.Errorf("migrating schema 2 → 3 (posting blocks): %w", err)
		}
		if !moved {
			return nil
		}
	}
}

// movePostings moves one batch and reports whether there may be more.
func movePostings(bdb *bbolt.DB) (bool, error) {
	more := false
	err := bdb.Update(func(tx *bbolt.Tx) error {
		old := tx.Bucket(bucketCallPostings)
		if old == nil {
			return nil
		}
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return fmt.Errorf("a file with call postings has no meta bucket")
		}
		if v := meta.Get([]byte("schema_version")); len(v) == 8 && binary.BigEndian.Uint64(v) > schemaVersion {
			return nil
		}
		// The file is version 3 from the first batch on: a file half moved must not be
		// opened by a version 2 binary, which would miss the moved postings. (The
		// migrations below 3 rewrite nothing, so none is skipped.)
		var ver [8]byte
		binary.BigEndian.PutUint64(ver[:], schemaVersion)
		if err := meta.Put([]byte("schema_version"), ver[:]); err != nil {
			return err
		}
		blocks, err := tx.CreateBucketIfNotExists(bucketCallPostingBlocks)
		if err != nil {
			return err
		}
		type moved struct {
			key   []byte
			scope string
			id    string
			tf    byte
		}
		var batch []moved
		c := old.Cursor()
		for k, v := c.First(); k != nil && len(batch) < postingMoveBatch; k, v = c.Next() {
			i := bytes.LastIndexByte(k, 0)
			if i < 0 || len(v) != 1 {
				return fmt.Errorf("an old posting %q is malformed", k)
			}
			batch = append(batch, moved{append([]byte(nil), k...), string(k[:i]), string(k[i+1:]), v[0]})
		}
		if len(batch) == 0 {
			return tx.DeleteBucket(bucketCallPostings)
		}
		for _, m := range batch {
			if err := putPosting(blocks, m.scope, m.id, m.tf); err != nil {
				return err
			}
			if err := old.Delete(m.key); err != nil {
				return err
			}
		}
		more = true
		return nil
	})
	return more, err
}
