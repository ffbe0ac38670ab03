package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/service"
)

// storeDump is everything an engine stores, as name → digest of the stored bytes: on
// bbolt every key of every bucket (nested ones by their path) and every file under the
// data directory's files/; on PostgreSQL every row of every table of the schema. Two
// dumps are equal exactly when nothing stored changed, whatever the API shows of it.
//
// An API key's last_used_at is left out: it is written in batches, seconds after any
// authenticated request (docs/api.md), refused or not.
type storeDump map[string]string

// dumpStore takes a dump of the engine db.
func dumpStore(t testing.TB, db cli.Backend) storeDump {
	t.Helper()
	var (
		d   storeDump
		err error
	)
	switch x := db.(type) {
	case *postgres.DB:
		d, err = dumpPostgres(x)
	default:
		d, err = dumpBolt(db)
	}
	if err != nil {
		t.Fatalf("dumping the store: %v", err)
	}
	return d
}

// boltEngine is what the bbolt engine gives a dump: its database and data directory.
type boltEngine interface {
	Bolt() *bbolt.DB
	Dir() string
}

func dumpBolt(db cli.Backend) (storeDump, error) {
	b, ok := db.(boltEngine)
	if !ok {
		return nil, fmt.Errorf("no dump of a %T", db)
	}
	d := storeDump{}
	var keys []int64
	err := b.Bolt().View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, bk *bbolt.Bucket) error {
			if string(name) == "api_keys" {
				return bk.ForEach(func(k, _ []byte) error {
					id, err := strconv.ParseInt(string(k), 16, 64)
					keys = append(keys, id)
					return err
				})
			}
			return dumpBucket(d, string(name), bk)
		})
	})
	if err == nil {
		err = dumpAPIKeys(d, db, keys)
	}
	if err != nil {
		return nil, err
	}
	root := filepath.Join(b.Dir(), "files")
	err = filepath.WalkDir(root, func(path string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		if err == nil {
			d["file:"+strings.TrimPrefix(path, root)] = digest(raw)
		}
		return err
	})
	if os.IsNotExist(err) {
		err = nil
	}
	return d, err
}

// dumpBucket adds bk's keys under prefix, and its nested buckets' under their paths.
func dumpBucket(d storeDump, prefix string, bk *bbolt.Bucket) error {
	return bk.ForEach(func(k, v []byte) error {
		name := prefix + "/" + hex.EncodeToString(k)
		if v == nil {
			return dumpBucket(d, name, bk.Bucket(k))
		}
		d[name] = digest(v)
		return nil
	})
}

// dumpAPIKeys adds the API keys as the engine reads them, without last_used_at: the
// bytes bbolt holds are the whole row, which the batched writes of last_used_at change.
func dumpAPIKeys(d storeDump, db service.Store, ids []int64) error {
	return db.View(context.Background(), func(tx service.Tx) error {
		for _, id := range ids {
			k, err := tx.APIKey(id)
			if err != nil || k == nil {
				return fmt.Errorf("API key %d: %v", id, err)
			}
			k.LastUsedAt = nil
			raw, err := json.Marshal(k)
			if err != nil {
				return err
			}
			d[fmt.Sprintf("api_keys/%d", id)] = digest(raw)
		}
		return nil
	})
}

// dumpPostgres reads every row of every table in one statement: each row as its JSON,
// an API key's without last_used_at and the revision its write bumps.
func dumpPostgres(db *postgres.DB) (storeDump, error) {
	ctx := context.Background()
	rows, err := db.Pool().Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		tables = append(tables, name)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	parts := make([]string, len(tables))
	for i, name := range tables {
		row := "to_jsonb(t)"
		if name == "api_keys" {
			row = "to_jsonb(t) - 'last_used_at' - 'revision'"
		}
		parts[i] = fmt.Sprintf(`SELECT %s, (%s)::text FROM %q t`, quoteLiteral(name), row, name)
	}
	rows, err = db.Pool().Query(ctx, strings.Join(parts, " UNION ALL "))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	d := storeDump{}
	for rows.Next() {
		var table, row string
		if err := rows.Scan(&table, &row); err != nil {
			return nil, err
		}
		// A row is named by its content: two equal rows of a table count as one, which
		// no table with a primary key can hold.
		d[table+"/"+digest([]byte(row))] = row
	}
	return d, rows.Err()
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// diff names what differs between two dumps, at most limit names.
func (d storeDump) diff(after storeDump, limit int) []string {
	var out []string
	for k, v := range d {
		if w, ok := after[k]; !ok {
			out = append(out, "removed "+k)
		} else if w != v {
			out = append(out, "changed "+k)
		}
	}
	for k := range after {
		if _, ok := d[k]; !ok {
			out = append(out, "added "+k)
		}
	}
	slices.Sort(out)
	if len(out) > limit {
		out = append(out[:limit], fmt.Sprintf("… %d more", len(out)-limit))
	}
	return out
}

// storeMark is a cheap token of whether an engine may have written: two equal marks mean
// nothing stored changed between them, so a test comparing dumps after each of thousands
// of requests dumps only when the mark moves (a moved mark may still mean no change, which
// the dumps then tell). On bbolt it is the last committed transaction's id and the files'
// names, sizes and times; on PostgreSQL the next transaction id the cluster will assign,
// which a transaction that writes anything (in any database of the cluster) moves.
func storeMark(t testing.TB, db cli.Backend) string {
	t.Helper()
	var mark string
	var err error
	switch x := db.(type) {
	case *postgres.DB:
		var next string
		err = x.Pool().QueryRow(context.Background(), `SELECT pg_snapshot_xmax(pg_current_snapshot())::text`).Scan(&next)
		mark = next
	case boltEngine:
		err = x.Bolt().View(func(tx *bbolt.Tx) error {
			mark = strconv.Itoa(tx.ID())
			return nil
		})
		if err == nil {
			mark, err = markFiles(mark, filepath.Join(x.Dir(), "files"))
		}
	default:
		err = fmt.Errorf("no mark of a %T", db)
	}
	if err != nil {
		t.Fatalf("marking the store: %v", err)
	}
	return mark
}

// markFiles adds to mark each file under root: its name, size and modification time.
func markFiles(mark, root string) (string, error) {
	var b strings.Builder
	b.WriteString(mark)
	err := filepath.WalkDir(root, func(path string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		info, err := de.Info()
		if err == nil {
			fmt.Fprintf(&b, "|%s %d %d", path, info.Size(), info.ModTime().UnixNano())
		}
		return err
	})
	if os.IsNotExist(err) {
		err = nil
	}
	return b.String(), err
}

// storeWatch follows a store across requests: changed reports what differs since the
// last call, dumping the store only when its mark moved.
type storeWatch struct {
	db   cli.Backend
	mark string
	dump storeDump
	// dumps counts the dumps taken after the first.
	dumps int
}

func watchStore(t testing.TB, db cli.Backend) *storeWatch {
	t.Helper()
	return &storeWatch{db: db, mark: storeMark(t, db), dump: dumpStore(t, db)}
}

// changed names at most limit differences since the last call (none when nothing changed).
func (s *storeWatch) changed(t testing.TB, limit int) []string {
	t.Helper()
	mark := storeMark(t, s.db)
	if mark == s.mark {
		return nil
	}
	after := dumpStore(t, s.db)
	s.dumps++
	out := s.dump.diff(after, limit)
	s.mark, s.dump = mark, after
	return out
}
