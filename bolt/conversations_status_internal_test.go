package bolt

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// statusTestConversations stores n conversations of ws_1 over agents agt_0..agt_3, in
// batches; active says which stay active (by their index, oldest first), the others
// are ended. It returns their ids, oldest first.
func statusTestConversations(t *testing.T, db *DB, n int, active func(i int) bool) []string {
	t.Helper()
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	ids := make([]string, n)
	for batch := 0; batch < n; batch += 5000 {
		if err := db.Update(context.Background(), func(tx service.Tx) error {
			for i := batch; i < min(n, batch+5000); i++ {
				ids[i] = fmt.Sprintf("conv_%08d", i) // in creation order, as ids are
				c := &data.StoredConversation{Conversation: data.Conversation{ID: ids[i], WorkspaceID: "ws_1", AgentID: fmt.Sprintf("agt_%d", i%4),
					Status: data.ConversationActive, CreatedAt: data.NewTime(t0), UpdatedAt: data.NewTime(t0)}, StartedBy: "usr_1"}
				if !active(i) {
					endedAt, reason := data.NewTime(t0), data.EndUserEnded
					c.Status, c.EndedAt, c.DisconnectionReason = data.ConversationEnded, &endedAt, &reason
				}
				if err := tx.InsertConversation(c, nil); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// bulkEndedConversations stores n conversations of ws_1 as statusTestConversations does,
// the oldest active and the rest ended, and returns their ids, oldest first. The oldest
// and the newest two (the ones the pages read) go through InsertConversation; every
// other one gets the entries InsertConversation writes for an ended conversation (the
// workspace's index, listConversation's) and its record as plain JSON, a form the reads
// take (decodeValue) and the one a record under compressMin is stored in. Deflating
// 100,000 records through InsertConversation took 200 s of the test's 201 under -race.
func bulkEndedConversations(t *testing.T, db *DB, n int) []string {
	t.Helper()
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	ids := make([]string, n)
	for batch := 0; batch < n; batch += 5000 {
		if err := db.Update(context.Background(), func(stx service.Tx) error {
			x := stx.(tx)
			for i := batch; i < min(n, batch+5000); i++ {
				ids[i] = fmt.Sprintf("conv_%08d", i) // in creation order, as ids are
				c := &data.StoredConversation{Conversation: data.Conversation{ID: ids[i], WorkspaceID: "ws_1", AgentID: fmt.Sprintf("agt_%d", i%4),
					Status: data.ConversationActive, CreatedAt: data.NewTime(t0), UpdatedAt: data.NewTime(t0)}, StartedBy: "usr_1"}
				if i > 0 {
					endedAt, reason := data.NewTime(t0), data.EndUserEnded
					c.Status, c.EndedAt, c.DisconnectionReason = data.ConversationEnded, &endedAt, &reason
				}
				if i == 0 || i >= n-2 {
					if err := x.InsertConversation(c, nil); err != nil {
						return err
					}
					continue
				}
				raw, err := json.Marshal(c)
				if err != nil {
					return err
				}
				if err := indexPut(x.b.Bucket(bucketConversationsByWS), c.WorkspaceID, c.ID); err != nil {
					return err
				}
				if err := listConversation(x.b, nil, c); err != nil {
					return err
				}
				if err := x.b.Bucket(bucketConversations).Put([]byte(c.ID), raw); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// listStatus is the first page of ws_1's conversations in status, of agents when not
// nil: its ids and whether it has a next_cursor.
func listStatus(t *testing.T, db *DB, status string, agents []string, per int) ([]string, bool) {
	t.Helper()
	out := []string{}
	var next bool
	if err := db.View(context.Background(), func(tx service.Tx) error {
		got, page, err := tx.ListConversations("ws_1", data.ConversationFilter{Status: status}, agents, data.PageRequest{PerPage: per})
		for _, c := range got {
			out = append(out, c.ID)
		}
		next = page.NextCursor != nil
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return out, next
}

// TestActivePageReadsOnlyActiveEntries: an active conversation older than 100,001 ended
// ones is on the first page of status=active, which ends there. Schema 25 walked every
// entry of the workspace and passed over the ended ones by their value, at most 100,000
// a page: that page was empty, with a next_cursor to resume past them.
func TestActivePageReadsOnlyActiveEntries(t *testing.T) {
	if testing.Short() {
		t.Skip("stores 100,002 conversations")
	}
	db, _, _ := openFile(t)
	defer db.Close()
	const ended = 100_001
	ids := bulkEndedConversations(t, db, ended+1)
	for _, agents := range [][]string{nil, {"agt_0", "agt_1"}} {
		if got, next := listStatus(t, db, data.ConversationActive, agents, 15); !reflect.DeepEqual(got, ids[:1]) || next {
			t.Errorf("agents %v: the active page = %v (next_cursor %v), want %v alone", agents, got, next, ids[:1])
		}
	}
	if got, next := listStatus(t, db, data.ConversationEnded, nil, 2); !reflect.DeepEqual(got, []string{ids[ended], ids[ended-1]}) || !next {
		t.Errorf("the ended page = %v (next_cursor %v)", got, next)
	}
}

// A schema 25 file listed no conversation by status. Opening it (schema 26) fills
// conversations_by_status from the schema-25 list, in the opening transaction, so that
// a status filter shows the conversations of before the upgrade.
func TestConversationsOfASchema25FileAreListedByStatus(t *testing.T) {
	db, dir, opts := openFile(t)
	ids := statusTestConversations(t, db, 10, func(i int) bool { return i%3 == 0 })
	db = asOlderFile(t, db, dir, opts, 25, bucketConversationsByStatus)
	defer db.Close()
	checkStatusLists(t, db, ids)
}

// checkStatusLists checks the status lists of the 10 conversations statusTestConversations
// stored with every third active.
func checkStatusLists(t *testing.T, db *DB, ids []string) {
	t.Helper()
	pick := func(idx ...int) []string {
		out := make([]string, len(idx))
		for i, n := range idx {
			out[i] = ids[n]
		}
		return out
	}
	for _, c := range []struct {
		status string
		agents []string
		want   []string
	}{
		{data.ConversationActive, nil, pick(9, 6, 3, 0)},
		{data.ConversationEnded, nil, pick(8, 7, 5, 4, 2, 1)},
		{data.ConversationActive, []string{"agt_1", "agt_2"}, pick(9, 6)},
		{data.ConversationEnded, []string{"agt_0"}, pick(8, 4)},
	} {
		if got, _ := listStatus(t, db, c.status, c.agents, 20); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s of %v = %v, want %v", c.status, c.agents, got, c.want)
		}
	}
}

// statusFillChild names the file the child of TestStatusFillSurvivesKill opens.
const statusFillChild = "VOICEAPI_TEST_STATUS_FILL_DIR"

// TestStatusFillSurvivesKill: a process SIGKILLed while schema 26's fill runs (its
// entries put, the transaction not committed) leaves a file of schema 25 that opens: the
// next open fills the lists again, and the filters show every conversation and campaign.
func TestStatusFillSurvivesKill(t *testing.T) {
	if dir := os.Getenv(statusFillChild); dir != "" {
		fillThenHang(dir)
		return
	}
	if testing.Short() {
		t.Skip("runs a child process and kills it")
	}
	db, dir, opts := openFile(t)
	ids := statusTestConversations(t, db, 10, func(i int) bool { return i%3 == 0 })
	campaigns := storeListTestCampaigns(t, db)
	// As a schema 25 binary left it: no status list, no campaign list.
	if err := db.bolt.Update(func(b *bbolt.Tx) error {
		if err := setSchemaVersion(b, 25); err != nil {
			return err
		}
		if err := b.DeleteBucket(bucketCampaignsListed); err != nil {
			return err
		}
		return b.DeleteBucket(bucketConversationsByStatus)
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestStatusFillSurvivesKill$", "-test.count=1")
	cmd.Env = append(os.Environ(), statusFillChild+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	filled := false
	for !filled && lines.Scan() {
		filled = strings.Contains(lines.Text(), "filled, not committed")
	}
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	if !filled {
		t.Fatal("the child never reached the fill")
	}

	if v := storedSchemaVersion(t, dir); v != 25 {
		t.Fatalf("after the kill the file has schema %d, want 25 (the fill's transaction lost)", v)
	}
	db, err = Open(dir, opts)
	if err != nil {
		t.Fatalf("opening after the kill: %v", err)
	}
	defer db.Close()
	if v, err := db.SchemaVersion(); err != nil || v != schemaVersion {
		t.Fatalf("schema %d, %v after the second open, want %d", v, err, schemaVersion)
	}
	checkStatusLists(t, db, ids)
	checkCampaignLists(t, db, campaigns)
	if err := db.bolt.View(func(tx *bbolt.Tx) error { return <-tx.Check() }); err != nil {
		t.Error(err)
	}
}

// fillThenHang is the child of TestStatusFillSurvivesKill: it opens dir with schema
// 26's fill wrapped to say when its entries are put, then waits inside the opening
// transaction to be killed.
func fillThenHang(dir string) {
	fill := migrations[25]
	migrations[25] = func(tx *bbolt.Tx) error {
		if err := fill(tx); err != nil {
			return err
		}
		fmt.Println("filled, not committed")
		time.Sleep(time.Hour) // killed here
		return nil
	}
	Open(dir, Options{PasswordCost: bcrypt.MinCost, SecretKey: make([]byte, 32)})
	fmt.Println("the open returned")
}

// storedSchemaVersion reads the schema version of the file in dir, read-only.
func storedSchemaVersion(t *testing.T, dir string) uint64 {
	t.Helper()
	b, err := bbolt.Open(filepath.Join(dir, FileName), 0o600, &bbolt.Options{ReadOnly: true, Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var v uint64
	if err := b.View(func(tx *bbolt.Tx) error {
		if s := tx.Bucket(bucketMeta).Get([]byte("schema_version")); len(s) == 8 {
			v = binary.BigEndian.Uint64(s)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return v
}
