package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// jobsScene is a workspace with agents Alpha and Bravo and their jobs: one queued for
// each (due in a day, so the server's runner leaves them be), one of Alpha's that ran
// once and failed with an error and some progress, and a url fetch of no agent.
type jobsScene struct {
	alpha, bravo                  string
	alphaJob, bravoJob, failedJob string
	fetchJob                      string
}

func newJobsScene(t *testing.T, b *browser, svc *service.Services) jobsScene {
	t.Helper()
	var s jobsScene
	s.alpha = str(b.mustAPI(http.StatusCreated, "POST", "/api/v1/agents", map[string]any{"name": "Alpha"})["id"])
	s.bravo = str(b.mustAPI(http.StatusCreated, "POST", "/api/v1/agents", map[string]any{"name": "Bravo"})["id"])
	ws := b.env.Owner.WorkspaceID
	later := time.Now().Add(24 * time.Hour)
	err := b.env.DB.Update(context.Background(), func(tx service.Tx) error {
		queue := func(kind, agent string, at time.Time) string {
			j, err := svc.Jobs.Enqueue(tx, data.JobEnqueue{WorkspaceID: ws, AgentID: agent, Kind: kind, Payload: []byte(`{}`), RunAt: at})
			if err != nil {
				t.Fatal(err)
			}
			return j.ID
		}
		s.fetchJob = queue(service.JobKindFetchURL, "", later)
		s.alphaJob = queue(service.JobKindAnalyzeCall, s.alpha, later)
		s.bravoJob = queue(service.JobKindAnalyzeCall, s.bravo, later)
		// Claimed and failed in this transaction, before the runner can see it due.
		now := time.Now()
		s.failedJob = queue(service.JobKindAnalysisBackfill, s.alpha, now.Add(-time.Second))
		claimed, _, err := tx.ClaimJobs(data.JobClaim{Kinds: []string{service.JobKindAnalysisBackfill}, Owner: "e2e", Now: now,
			LeaseUntil: now.Add(time.Minute), Limit: 1})
		if err != nil || len(claimed) != 1 || claimed[0].ID != s.failedJob {
			t.Fatalf("claim: %v %v", claimed, err)
		}
		lease := claimed[0].Lease()
		if _, err := tx.SetJobProgress(s.failedJob, lease, data.JobProgress{Done: 2, Total: 5}, ""); err != nil {
			return err
		}
		_, err = tx.FinishJob(s.failedJob, lease, data.JobOutcome{Status: data.JobFailed, At: now, Error: "groq: 401 invalid api key"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// jobRows are the ids of the jobs the page's table lists, in order.
func (b *browser) jobRows() []string {
	b.t.Helper()
	var ids []string
	b.eval("job rows", `Array.from(document.querySelectorAll("#jobs tbody tr")).map(r => r.dataset.job)`, &ids)
	return ids
}

// TestJobsPage: the owner opens Jobs from the nav, sees every job newest first, narrows
// the list to the failed one, and reads its error, attempt and progress on its page; a
// bad filter is refused on the form. A member limited to agent Alpha sees Alpha's jobs
// only, as the API shows them, and Bravo's job's page is not found.
func TestJobsPage(t *testing.T) {
	var svc *service.Services
	b := newBrowserWith(t, func(s *service.Services) { svc = s })
	b.signIn(b.env.Owner.Email, b.env.Owner.Password, "")
	s := newJobsScene(t, b, svc)

	b.open("/")
	b.followText("Jobs")
	b.waitText("Call analysis")
	if got, want := b.jobRows(), []string{s.failedJob, s.bravoJob, s.alphaJob, s.fetchJob}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("the owner's jobs: %v, want %v", got, want)
	}
	b.audit("jobs")

	b.setSelect("#j-status", data.JobFailed)
	b.submit("#j-status")
	if got := b.jobRows(); len(got) != 1 || got[0] != s.failedJob {
		t.Fatalf("failed jobs: %v, want %s", got, s.failedJob)
	}
	if row := b.text("#jobs tbody"); !strings.Contains(row, "groq: 401 invalid api key") || !strings.Contains(row, "1 of 6") || !strings.Contains(row, "2 of 5") {
		t.Errorf("the failed job's row: %q", row)
	}
	b.follow("open the job", chromedp.Click(`#jobs tbody a`, chromedp.ByQuery))
	b.waitText("Analysis backfill")
	if e := b.text("#job-error"); !strings.Contains(e, "groq: 401 invalid api key") {
		t.Errorf("the job's error: %q", e)
	}
	if f := b.text("#job-facts"); !strings.Contains(f, "1 of 6") || !strings.Contains(f, "2 of 5") || !strings.Contains(f, "Alpha") ||
		!strings.Contains(f, "Analysis backfill") || strings.Contains(f, "analysis.backfill") {
		t.Errorf("the job's facts (its kind in words, not as stored): %q", f)
	}
	b.audit("job")

	b.open("/jobs?from=2026-11-22&to=2026-11-21")
	b.waitText("To")
	if e := b.text(".alert"); !strings.Contains(e, "after") {
		t.Errorf("a range that ends before it starts: %q", e)
	}

	// A member of call history limited to Alpha.
	mia := b.env.NewUser("mia@example.com", false)
	b.mustAPI(http.StatusCreated, "POST", "/api/v1/workspaces/"+b.env.Owner.WorkspaceID+"/users",
		map[string]any{"id": mia.ID, "role": data.RoleMember, "modules": []string{data.ModuleCallHistory}, "agent_ids": []string{s.alpha}})
	b.run("sign out", chromedp.Click(`form.signout button`, chromedp.ByQuery), chromedp.WaitVisible("#email", chromedp.ByQuery))
	b.signIn(mia.Email, mia.Password, b.env.Owner.WorkspaceID)
	b.followText("Jobs")
	b.waitText("Call analysis")
	if got, want := b.jobRows(), []string{s.failedJob, s.alphaJob}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("the limited member's jobs: %v, want %v", got, want)
	}
	if page := b.text("main"); strings.Contains(page, "Bravo") || strings.Contains(page, s.bravo) {
		t.Errorf("the limited member's page names Bravo: %q", page)
	}
	b.open("/jobs?agent_id=" + s.bravo)
	b.waitText("No job matches these filters.")
	b.open("/jobs/" + s.bravoJob)
	b.waitText("not found")
	if page := b.text("main"); strings.Contains(page, s.bravo) || strings.Contains(page, "analysis") {
		t.Errorf("Bravo's job's page for the limited member: %q", page)
	}
}
