package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/service"
)

// killDeleteRecipients is the size of the campaign TestCampaignDeleteJobSurvivesKill
// deletes: its delete takes the first service.CampaignDeleteBatch and leaves 24 batches
// to the job, long enough a run (about a second on bbolt) to be killed in.
const killDeleteRecipients = 25_000

// TestCampaignDeleteJobSurvivesKill: a campaign of 25,000 recipients is deleted (204), and
// the server is SIGKILLed while the campaign.delete_recipients job is running (seen
// running in GET /jobs). The restarted server (same data: bbolt, or PostgreSQL with
// VOICEAPI_TEST_BACKEND=postgres) finishes the job: the campaign stays 404, no recipient
// of it is left, the workspace's kept count is the other campaign's alone, one
// campaign.deleted event was recorded, and the job succeeded on its second attempt.
func TestCampaignDeleteJobSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it")
	}
	bin := voiceapiBinary(t)
	dataDir := filepath.Join(t.TempDir(), "data")
	flags := killedJobFlags()
	srv, stdout := startServer(t, bin, dataDir, flags...)
	token := bootstrapToken(t, stdout)
	agent, number := dialAgentAndNumber(t, srv.url, token)
	kept := canceledCampaign(t, srv.url, token, agent, number, 0, 3)
	doomed := canceledCampaign(t, srv.url, token, agent, number, 100, killDeleteRecipients)
	if status, body := call(t, "DELETE", srv.url+"/api/v1/campaigns/"+doomed, token, ""); status != 204 {
		t.Fatalf("delete: %d %s", status, body)
	}
	srv = killWhileJobRuns(t, srv, bin, dataDir, flags, token, service.JobKindDeleteCampaignRecipients)
	if status, body := call(t, "GET", srv.url+"/api/v1/campaigns/"+doomed, token, ""); status != 404 {
		t.Errorf("the deleted campaign after the restart: %d %s", status, body)
	}
	status, body := call(t, "GET", srv.url+"/api/v1/audit-log?per_page=100&type="+data.EventCampaignDeleted, token, "")
	if n := strings.Count(string(body), doomed); status != 200 || n == 0 {
		t.Errorf("audit log: %d %s", status, body)
	} else if events := len(listOf(t, body)); events != 1 {
		t.Errorf("%d campaign.deleted events, want 1", events)
	}
	srv.cmd.Process.Signal(syscall.SIGTERM)
	srv.cmd.Wait()

	withStoppedStore(t, dataDir, func(tx service.Tx) error {
		left, _, err := tx.Recipients(doomed, service.StateSelection{}, data.PageRequest{PerPage: 1})
		if err != nil {
			return err
		}
		if len(left) != 0 {
			t.Errorf("recipient %s of the deleted campaign is left", left[0].ID)
		}
		c, err := tx.Campaign(kept)
		if err != nil {
			return err
		}
		n, err := tx.KeptCampaignRecipients(c.WorkspaceID)
		if err != nil {
			return err
		}
		if n != 3 {
			t.Errorf("the workspace keeps %d recipients, want the 3 of the campaign left", n)
		}
		jobs, _, err := tx.Jobs(c.WorkspaceID, data.PageRequest{PerPage: 100})
		found := 0
		for _, j := range jobs {
			if j.Kind != service.JobKindDeleteCampaignRecipients {
				continue
			}
			found++
			if j.Status != data.JobSucceeded || j.Attempt != 2 {
				t.Errorf("the delete job: %s on attempt %d, want succeeded on attempt 2 (the killed run, the finishing run)", j.Status, j.Attempt)
			}
		}
		if found != 1 {
			t.Errorf("%d delete jobs stored, want 1", found)
		}
		return err
	})
	checkStoredRecipients(t, dataDir, 3)
}

// checkStoredRecipients checks, below the indexes the store's reads go through, that the
// stopped installation holds want recipients (pending, none leased or calling) and no
// campaign still being deleted: on
// bbolt each recipients bucket's keys (records, by campaign, due, by state, leased, by call) and the
// campaigns_deleting list; on PostgreSQL the campaign_recipients table.
func checkStoredRecipients(t *testing.T, dataDir string, want int) {
	t.Helper()
	store, closeStore := openStoppedStore(t, dataDir)
	defer closeStore()
	switch db := store.(type) {
	case *postgres.DB:
		var n int
		if err := db.Pool().QueryRow(context.Background(), `SELECT count(*) FROM campaign_recipients`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Errorf("campaign_recipients holds %d rows, want %d", n, want)
		}
	case *bolt.DB:
		err := db.Bolt().View(func(tx *bbolt.Tx) error {
			// The campaign left was canceled before any dial: its recipients stay pending
			// (a cancel counts them canceled, writing none), none leased or calling.
			for name, keys := range map[string]int{"recipients": want, "recipients_by_campaign": want, "recipients_due": want,
				"recipients_by_state": want, "recipients_lease": 0, "recipients_by_call": 0, "campaigns_deleting": 0} {
				b := tx.Bucket([]byte(name))
				if b == nil {
					return fmt.Errorf("no bucket %s", name)
				}
				if n := b.Stats().KeyN; n != keys {
					t.Errorf("bucket %s holds %d keys, want %d", name, n, keys)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("no recipients check on %T", store)
	}
}

// dialAgentAndNumber creates a published agent and a number; it returns their ids.
func dialAgentAndNumber(t *testing.T, url, token string) (agent, number string) {
	t.Helper()
	agent = createdID(t)(call(t, "POST", url+"/api/v1/agents", token, `{"name":"Dialer"}`))
	if status, body := call(t, "POST", url+"/api/v1/agents/"+agent+"/publish", token, ""); status != 204 {
		t.Fatalf("publish: %d %s", status, body)
	}
	number = createdID(t)(call(t, "POST", url+"/api/v1/numbers", token, `{"phone_number":"+14155550123","provider":"sip"}`))
	return agent, number
}

// canceledCampaign creates a campaign of n recipients (numbers from first on) and
// cancels it before any is dialed, so that it is finished; it returns its id.
func canceledCampaign(t *testing.T, url, token, agent, number string, first, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"phone_number":"+1415%07d"}`, first+i)
	}
	id := createdID(t)(call(t, "POST", url+"/api/v1/campaigns", token, `{"name":"Kill","agent_id":"`+agent+`","number_id":"`+number+
		`","window":{"days":["mon","tue","wed","thu","fri","sat","sun"],"start":"00:00","end":"23:59"},"max_concurrent":1,"recipients":[`+b.String()+`]}`))
	if status, body := call(t, "POST", url+"/api/v1/campaigns/"+id+"/cancel", token, ""); status != 200 {
		t.Fatalf("cancel: %d %s", status, body)
	}
	return id
}

// createdID returns a check of a create's answer that returns the new record's id.
func createdID(t *testing.T) func(int, []byte) string {
	return func(status int, body []byte) string {
		t.Helper()
		var r struct{ Data struct{ ID string } }
		json.Unmarshal(body, &r)
		if status != 201 || r.Data.ID == "" {
			t.Fatalf("create: %d %.300s", status, body)
		}
		return r.Data.ID
	}
}

// killWhileJobRuns SIGKILLs srv once a job of kind is seen running (polled every 2 ms, for
// 30 s at most), starts the server again on dataDir and returns it once a job of kind has
// succeeded (within a minute).
func killWhileJobRuns(t *testing.T, srv *proc, bin, dataDir string, flags []string, token, kind string) *proc {
	t.Helper()
	jobs := "/api/v1/jobs?kind=" + kind
	for deadline := time.Now().Add(30 * time.Second); !hasJob(t, srv.url+jobs+"&status=running", token); {
		if time.Now().After(deadline) {
			t.Fatalf("no %s job was seen running in 30 s", kind)
		}
		time.Sleep(2 * time.Millisecond)
	}
	srv.cmd.Process.Signal(syscall.SIGKILL)
	srv.cmd.Wait()

	srv, _ = startServer(t, bin, dataDir, flags...)
	for deadline := time.Now().Add(60 * time.Second); !hasJob(t, srv.url+jobs+"&status=succeeded", token); {
		if time.Now().After(deadline) {
			t.Fatalf("the %s job did not succeed within a minute of the restart", kind)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return srv
}

// killedJobFlags are the flags of a server whose job killWhileJobRuns kills: the
// restarted server runs it again as soon as its lease allows.
func killedJobFlags() []string {
	lease := "10m" // the restarted server owns the bbolt file alone: it runs the job at once
	if testkit.OnPostgres() {
		lease = "2s" // another replica might hold it: the restarted one waits the lease out
	}
	return []string{"--rate-limit", "0", "--job-lease", lease, "--job-poll", "200ms"}
}

// hasJob reports whether the job list at url has a job.
func hasJob(t *testing.T, url, token string) bool {
	t.Helper()
	status, body := call(t, "GET", url, token, "")
	if status != http.StatusOK {
		t.Fatalf("jobs: %d %s", status, body)
	}
	return len(listOf(t, body)) > 0
}

// listOf returns the items of a list's answer.
func listOf(t *testing.T, body []byte) []json.RawMessage {
	t.Helper()
	var l struct{ Data []json.RawMessage }
	if err := json.Unmarshal(body, &l); err != nil {
		t.Fatalf("list: %v %s", err, body)
	}
	return l.Data
}

// withStoppedStore reads the stopped installation in dataDir in one view
// (openStoppedStore).
func withStoppedStore(t *testing.T, dataDir string, read func(tx service.Tx) error) {
	t.Helper()
	store, closeStore := openStoppedStore(t, dataDir)
	defer closeStore()
	if err := store.View(context.Background(), read); err != nil {
		t.Fatal(err)
	}
}

// openStoppedStore opens the stopped installation in dataDir (on the engine the tests
// run on; on bbolt after checking the file's consistency), and its sealer; the store
// must be closed before a server starts on it again.
func openStoppedStore(t *testing.T, dataDir string) (service.Store, func()) {
	t.Helper()
	if testkit.OnPostgres() {
		db, err := postgres.Open(context.Background(), postgres.Options{URL: databaseOf(t, dataDir), DataDir: dataDir})
		if err != nil {
			t.Fatal(err)
		}
		return db, func() { db.Close() }
	}
	db, err := bolt.Open(dataDir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CheckConsistency(); err != nil {
		t.Errorf("the stopped server's file: %v", err)
	}
	return db, func() { db.Close() }
}
