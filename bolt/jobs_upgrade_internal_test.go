package bolt

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// testdata/jobs_schema8.db.gz is a file written by the schema 8 code (commit 87b6166)
// holding jobHistory's jobs, and testdata/jobs_schema8_pages.json every page of
// jobUpgradeSelections that code answered, walked with per_page 3 forward by
// next_cursor, then back by prev_cursor: the cursors it handed out, and what each
// returned. Written by TestWriteJobUpgradeGolden with VOICEAPI_JOB_GOLDEN set to a
// directory, run on that commit.
const (
	jobGoldenDB    = "testdata/jobs_schema8.db.gz"
	jobGoldenPages = "testdata/jobs_schema8_pages.json"
)

// jobUpgradeSelections are the lists compared across the upgrade: each status (and
// none) under each way of narrowing the kinds and agents.
func jobUpgradeSelections() map[string]data.JobSelection {
	narrow := map[string]data.JobSelection{
		"all":             {Kinds: listKinds},
		"kind b.work":     {Kinds: listKinds, JobFilter: data.JobFilter{Kind: "b.work"}},
		"agent rare":      {Kinds: listKinds, JobFilter: data.JobFilter{AgentID: rareAgent}},
		"caller's agents": {Kinds: listKinds, Agents: []string{rareAgent}},
		"readable a.work": {Kinds: []string{"a.work"}},
	}
	out := map[string]data.JobSelection{}
	for name, sel := range narrow {
		for _, status := range append([]string{""}, data.JobStatuses...) {
			s := sel
			s.Status = status
			out[name+", status "+status] = s
		}
	}
	return out
}

// jobPageSeen is one page request of a walk and its answer.
type jobPageSeen struct {
	Selection string   `json:"selection"`
	Cursor    string   `json:"cursor"`
	IDs       []string `json:"ids"`
	Next      *string  `json:"next_cursor"`
	Prev      *string  `json:"prev_cursor"`
}

// walkJobList pages through sel with per_page 3, forward and then back.
func walkJobList(t *testing.T, db *DB, name string, sel data.JobSelection) []jobPageSeen {
	t.Helper()
	var seen []jobPageSeen
	read := func(cursor string) jobPageSeen {
		list, page := listJobsPage(t, db, sel, data.PageRequest{PerPage: 3, Cursor: cursor})
		p := jobPageSeen{Selection: name, Cursor: cursor, IDs: jobIDsOf(list), Next: page.NextCursor, Prev: page.PrevCursor}
		seen = append(seen, p)
		return p
	}
	p := read("")
	for n := 0; p.Next != nil && n < 100; n++ {
		p = read(*p.Next)
	}
	for n := 0; p.Prev != nil && n < 100; n++ {
		p = read(*p.Prev)
	}
	return seen
}

// jobHistory stores jobs of listWS and another workspace through the transitions a
// runner makes (enqueue, claim, retry, fail, succeed, cancel), due in an order other
// than their ids', so that queued and running jobs alternate in id order.
func jobHistory(t *testing.T, db *DB, c *clock) {
	t.Helper()
	ctx := context.Background()
	update := func(fn func(tx service.Tx) error) {
		t.Helper()
		if err := db.Update(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	var jobs []*data.JobRecord
	for i := range 36 {
		for _, ws := range []string{listWS, "ws_01JD6000000000000000000002"} {
			kind := listKinds[i%2]
			j := &data.JobRecord{Job: data.Job{ID: db.ids.New(data.PrefixJob), WorkspaceID: ws, Kind: kind, Status: data.JobQueued,
				MaxAttempts: 3, RunAt: data.NewTime(c.t.Add(time.Duration(i%5) * time.Minute)), CreatedAt: data.NewTime(c.t)}}
			if agent := []string{busyAgent, rareAgent, ""}[i%3]; agent != "" {
				j.AgentID = &agent
			}
			update(func(tx service.Tx) error { _, err := tx.EnqueueJob(j); return err })
			jobs = append(jobs, j)
		}
		c.t = c.t.Add(time.Second)
	}
	claim := func(limit int) []*data.JobRecord {
		var claimed []*data.JobRecord
		update(func(tx service.Tx) (err error) {
			claimed, _, err = tx.ClaimJobs(data.JobClaim{Kinds: listKinds, Owner: "r1", Now: c.t.Add(time.Hour), LeaseUntil: c.t.Add(2 * time.Hour), Limit: limit})
			return err
		})
		return claimed
	}
	finish := func(j *data.JobRecord, out data.JobOutcome) {
		update(func(tx service.Tx) error {
			if ok, err := tx.FinishJob(j.ID, j.Lease(), out); !ok || err != nil {
				t.Fatalf("finish %s: %v, %v", j.ID, ok, err)
			}
			return nil
		})
	}
	for i, j := range claim(40) {
		switch i % 5 {
		case 0:
			finish(j, data.JobOutcome{Status: data.JobSucceeded, At: c.t})
		case 1:
			finish(j, data.JobOutcome{Status: data.JobFailed, At: c.t, Error: "gave up"})
		case 2:
			finish(j, data.JobOutcome{Status: data.JobQueued, RunAt: c.t.Add(3 * time.Hour), Error: "try again"})
		case 3:
			update(func(tx service.Tx) error { _, err := tx.CancelJob(j.ID, c.t); return err })
		}
	}
	for _, j := range jobs[len(jobs)-8:] {
		update(func(tx service.Tx) error { _, err := tx.CancelJob(j.ID, c.t); return err })
	}
	claim(10)
}

// TestWriteJobUpgradeGolden writes the golden files to $VOICEAPI_JOB_GOLDEN: run on the
// schema 8 code, it made the ones TestJobListingSurvivesUpgrade reads. Skipped otherwise.
func TestWriteJobUpgradeGolden(t *testing.T) {
	out := os.Getenv("VOICEAPI_JOB_GOLDEN")
	if out == "" {
		t.Skip("VOICEAPI_JOB_GOLDEN names no directory to write the golden files to")
	}
	dir := t.TempDir()
	c := &clock{t: time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)}
	db, err := Open(dir, Options{PasswordCost: bcrypt.MinCost, NoSync: true, SecretKey: make([]byte, 32), Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	jobHistory(t, db, c)
	var pages []jobPageSeen
	sels := jobUpgradeSelections()
	for _, name := range slices.Sorted(maps.Keys(sels)) {
		pages = append(pages, walkJobList(t, db, name, sels[name])...)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	var zipped bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&zipped, gzip.BestCompression)
	zw.Write(raw)
	zw.Close()
	js, _ := json.MarshalIndent(pages, "", " ")
	if err := os.WriteFile(filepath.Join(out, filepath.Base(jobGoldenDB)), zipped.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, filepath.Base(jobGoldenPages)), append(js, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// openJobGolden opens the golden schema 8 file in a temporary directory, after edit
// (when not nil) has changed it as raw bbolt.
func openJobGolden(t *testing.T, edit func(tx *bbolt.Tx) error) *DB {
	t.Helper()
	f, err := os.Open(jobGoldenDB)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		b, err := bbolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Update(edit); err != nil {
			t.Fatal(err)
		}
		b.Close()
	}
	db, err := Open(dir, Options{PasswordCost: bcrypt.MinCost, NoSync: true, SecretKey: make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestJobListingSurvivesUpgrade: a schema 8 file, opened by this code, moves to schema 9
// and answers every page the schema 8 code answered, cursor for cursor: the same jobs in
// the same order and the same next and prev cursors, the cursors it handed out
// included, so a walk begun before the upgrade goes on after it. A file at schema 7 (no
// job list index) gets there too, through 7 → 8 → 9. A migration that dropped an entry
// or put one under the wrong status would change a page.
func TestJobListingSurvivesUpgrade(t *testing.T) {
	js, err := os.ReadFile(jobGoldenPages)
	if err != nil {
		t.Fatal(err)
	}
	var want []jobPageSeen
	if err := json.Unmarshal(js, &want); err != nil {
		t.Fatal(err)
	}
	sels := jobUpgradeSelections()
	seenStatus := map[string]bool{}
	for _, p := range want {
		if len(p.IDs) > 0 {
			seenStatus[sels[p.Selection].Status] = true
		}
	}
	if len(seenStatus) != len(data.JobStatuses)+1 {
		t.Fatalf("the golden pages hold jobs of %d statuses (and none), want every one", len(seenStatus)-1)
	}
	str := func(s *string) string {
		if s == nil {
			return "null"
		}
		return *s
	}
	for name, edit := range map[string]func(tx *bbolt.Tx) error{
		"schema 8": nil,
		"schema 7": func(tx *bbolt.Tx) error {
			if err := tx.DeleteBucket(bucketJobsListed); err != nil {
				return err
			}
			return tx.Bucket(bucketMeta).Put([]byte("schema_version"), binary.BigEndian.AppendUint64(nil, 7))
		},
	} {
		t.Run(name, func(t *testing.T) {
			db := openJobGolden(t, edit)
			if v, err := db.SchemaVersion(); err != nil || v != schemaVersion {
				t.Fatalf("schema version %d, %v; want %d", v, err, schemaVersion)
			}
			checkJobListing(t, db.bolt, "after the upgrade")
			for _, p := range want {
				sel, ok := sels[p.Selection]
				if !ok {
					t.Fatalf("the golden pages name an unknown selection %q", p.Selection)
				}
				list, page := listJobsPage(t, db, sel, data.PageRequest{PerPage: 3, Cursor: p.Cursor})
				// Cursors are written encrypted since schema 8's were (clear): one of today
				// holds the same position when it reads the same page as schema 8's.
				samePosition := func(got, golden *string) bool {
					if str(got) == str(golden) {
						return true
					}
					if got == nil || golden == nil {
						return false
					}
					a, _ := listJobsPage(t, db, sel, data.PageRequest{PerPage: 3, Cursor: *got})
					b, _ := listJobsPage(t, db, sel, data.PageRequest{PerPage: 3, Cursor: *golden})
					return slices.Equal(jobIDsOf(a), jobIDsOf(b))
				}
				if got := jobIDsOf(list); !slices.Equal(got, p.IDs) || !samePosition(page.NextCursor, p.Next) || !samePosition(page.PrevCursor, p.Prev) {
					t.Errorf("%s, cursor %q: %v next %s prev %s; schema 8 answered %v next %s prev %s",
						p.Selection, p.Cursor, got, str(page.NextCursor), str(page.PrevCursor), p.IDs, str(p.Next), str(p.Prev))
				}
			}
			// A cursor of one list is still refused by another, as the usual 422.
			var cursor string
			for _, p := range want {
				if p.Next != nil && sels[p.Selection].Status == data.JobQueued {
					cursor = *p.Next
					break
				}
			}
			err := db.View(context.Background(), func(tx service.Tx) error {
				_, _, err := tx.ListJobs(listWS, data.JobSelection{Kinds: listKinds, JobFilter: data.JobFilter{Status: data.JobRunning}}, data.PageRequest{PerPage: 3, Cursor: cursor})
				return err
			})
			var de *data.Error
			if cursor == "" || !errors.As(err, &de) || de.Code != data.EINVALID || len(de.Fields["cursor"]) != 1 {
				t.Errorf("a queued list's cursor (%q) given to the running list: %v; want a validation error on cursor", cursor, err)
			}
		})
	}
}

// BenchmarkJobPendingScopesMigration: the schema 8 → 9 migration's work over an index
// holding 2 × 20,000 pending jobs (queued, every tenth running) with their entries as
// schema 8 kept them, each run in a transaction rolled back. docs/performance.md records
// the figure.
func BenchmarkJobPendingScopesMigration(b *testing.B) {
	c := &clock{t: time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)}
	db := openInternal(b, c)
	for start := 0; start < 20_000; start += 1000 {
		if err := db.Update(context.Background(), func(tx service.Tx) error {
			for i := start; i < start+1000; i++ {
				for _, ws := range []string{listWS, "ws_01JD6000000000000000000002"} {
					agent := busyAgent
					j := &data.JobRecord{Job: data.Job{ID: db.ids.New(data.PrefixJob), WorkspaceID: ws, AgentID: &agent, Kind: listKinds[i%2],
						Status: data.JobQueued, MaxAttempts: 3, RunAt: data.NewTime(c.t), CreatedAt: data.NewTime(c.t)}}
					if i%10 == 0 {
						until := data.NewTime(c.t.Add(time.Hour))
						j.Status, j.Attempt, j.LeaseOwner, j.LeaseUntil = data.JobRunning, 1, "r1", &until
					}
					if _, err := tx.EnqueueJob(j); err != nil {
						return err
					}
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		b.StopTimer()
		tx, err := db.bolt.Begin(true)
		if err != nil {
			b.Fatal(err)
		}
		// Back to schema 8: each pending entry under its status's own scope.
		idx := tx.Bucket(bucketJobsListed)
		var entries []indexEntry
		var gone [][]byte
		cur := idx.Cursor()
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			if len(v) == 0 {
				continue
			}
			end := bytes.LastIndexByte(k, 0)
			status := map[byte]string{dueQueued: data.JobQueued, dueRunning: data.JobRunning}[v[0]]
			scope := strings.TrimSuffix(string(k[:end]), "/p") + "/s/" + status
			gone = append(gone, slices.Clone(k))
			entries = append(entries, indexEntry{indexKey(scope, string(k[end+1:])), nil})
		}
		for _, k := range gone {
			if err := idx.Delete(k); err != nil {
				b.Fatal(err)
			}
		}
		if err := putSorted(idx, entries); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := mergePendingJobScopes(tx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := jobListingFault(tx); err != nil {
			b.Fatal(err)
		}
		tx.Rollback()
		b.StartTimer()
	}
}

// TestOpenRefusesNewerSchema: a file of a schema newer than this code knows (one past
// schemaVersion) is refused at open, and left as it was.
func TestOpenRefusesNewerSchema(t *testing.T) {
	db, dir, opts := openFile(t)
	db.Close()
	raw, err := bbolt.Open(filepath.Join(dir, FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	newer := binary.BigEndian.AppendUint64(nil, schemaVersion+1)
	if err := raw.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketMeta).Put([]byte("schema_version"), newer) }); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if db, err := Open(dir, opts); err == nil || !strings.Contains(err.Error(), "newer than this voiceapi") {
		if db != nil {
			db.Close()
		}
		t.Fatalf("opening a schema %d file: %v; want it refused as newer", schemaVersion+1, err)
	}
	raw, err = bbolt.Open(filepath.Join(dir, FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.View(func(tx *bbolt.Tx) error {
		if v := tx.Bucket(bucketMeta).Get([]byte("schema_version")); !bytes.Equal(v, newer) {
			t.Errorf("after the refusal the file's version is %x, want %x", v, newer)
		}
		return nil
	})
}
