package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/service"
)

// deletedCampaign stores a campaign of n recipients in a new workspace of svc, cancels
// and deletes it (the record and the first service.CampaignDeleteBatch recipients go;
// the rest wait for the job), and returns its id.
func deletedCampaign(t *testing.T, svc *service.Services, workspace, n int) string {
	t.Helper()
	u, err := svc.Users.CreateUser(context.Background(), data.UserCreate{Name: "Dialer", Email: fmt.Sprintf("dialer%d@example.com", workspace), Password: "password-dialer"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testkit.As(u)
	a, err := svc.Agents.CreateAgent(ctx, data.AgentCreate{Name: data.Some("Dialer")})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Agents.PublishAgent(ctx, a.ID, data.PublishRequest{}); err != nil {
		t.Fatal(err)
	}
	num, err := svc.Numbers.CreateNumber(ctx, data.NumberCreate{PhoneNumber: fmt.Sprintf("+1415555%04d", 100+workspace), Provider: "sip"})
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]data.RecipientInput, n)
	for i := range rows {
		rows[i] = data.RecipientInput{PhoneNumber: fmt.Sprintf("+1415%07d", 2_000_000+workspace*100_000+i)}
	}
	mc := 10
	c, err := svc.Campaigns.CreateCampaign(ctx, data.CampaignCreate{Name: "Bulk", AgentID: a.ID, NumberID: num.ID, MaxConcurrent: &mc,
		Window: &data.CampaignWindow{Days: data.Weekdays, Start: "00:00", End: "23:59"}, Recipients: rows})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Campaigns.CancelCampaign(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.Campaigns.DeleteCampaign(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	return c.ID
}

// deleteBatches deletes the campaign's recipients as its job does: a batch a write until
// one comes short.
func deleteBatches(db *postgres.DB, campaignID string) error {
	for {
		n := 0
		if err := db.Update(context.Background(), func(tx service.Tx) (err error) {
			n, err = tx.DeleteCampaignRecipients(campaignID, service.CampaignDeleteBatch)
			return err
		}); err != nil {
			return err
		}
		if n < service.CampaignDeleteBatch {
			return nil
		}
	}
}

// recipientsLeft counts the campaign's recipients still stored.
func recipientsLeft(t *testing.T, url, campaignID string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM campaign_recipients WHERE campaign_id = $1`, campaignID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitForLockWait waits until a session of url's database waits for a lock.
func waitForLockWait(t *testing.T, url string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var waiting int
		if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			return
		}
	}
	t.Fatal("no session came to wait for a lock")
}

// Two workspaces' campaign-delete jobs at once: no serialization failure. A batch reads
// 1,000 recipients over some 84 heap pages, and at SERIALIZABLE PostgreSQL promoted that
// read to a predicate lock on the whole table; each job's writes then met the other's
// lock, and one batch in four or so failed (51 of 200 for two campaigns of 100,000).
func TestCampaignDeleteJobsOfTwoWorkspacesDoNotConflict(t *testing.T) {
	cluster, url := ownCluster(t)
	db, err := postgres.Open(context.Background(), postgres.Options{URL: url, PasswordCost: bcrypt.MinCost, SecretKey: testkit.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc := testkit.Services(t, db, nil)
	ids := []string{deletedCampaign(t, svc, 1, 30_000), deletedCampaign(t, svc, 2, 30_000)}
	before, err := cluster.SerializationFailures()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(ids))
	for i, id := range ids {
		wg.Go(func() { errs[i] = deleteBatches(db, id) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	after, err := cluster.SerializationFailures()
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		log, _ := os.ReadFile(cluster.LogPath())
		t.Errorf("%d serialization failures while two workspaces' campaigns were deleted, want none; the log:\n%s", after-before, lastLines(string(log), 20))
	}
	for _, id := range ids {
		if left := recipientsLeft(t, url, id); left != 0 {
			t.Errorf("campaign %s keeps %d recipients after its batches", id, left)
		}
	}
}

// A second runner of the delete job (the first's lease taken over) whose batch meets the
// first runner's batch of the same rows: the first commits them, and the second's count
// must not come short for it, which would end its job with recipients left behind while
// the first runner stops at its next heartbeat. The batches of one campaign take turns.
// (At SERIALIZABLE the second batch failed to serialize and ran again; at READ
// COMMITTED, which the job's batches run at, the turns keep its count true.)
func TestCampaignDeleteBatchesOfTwoRunnersTakeTurns(t *testing.T) {
	url := pgtest.Database(t)
	db, err := postgres.Open(context.Background(), postgres.Options{URL: url, PasswordCost: bcrypt.MinCost, SecretKey: testkit.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc := testkit.Services(t, db, nil)
	id := deletedCampaign(t, svc, 1, 5_000)
	holding, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- db.Update(context.Background(), func(tx service.Tx) error {
			if _, err := tx.DeleteCampaignRecipients(id, service.CampaignDeleteBatch); err != nil {
				return err
			}
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	second := make(chan error, 1)
	go func() { second <- deleteBatches(db, id) }()
	// Let the second runner's batch reach the rows the first holds (without the turns it
	// waits for their row locks, and finds them gone once the first commits).
	waitForLockWait(t, url)
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if left := recipientsLeft(t, url, id); left != 0 {
		t.Errorf("the second runner ended its job with %d recipients left", left)
	}
}
