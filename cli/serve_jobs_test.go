package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// TestServeJobFlags: the defaults, and each bound at its edge and just past it; a refused
// value stops serve before anything opens.
func TestServeJobFlags(t *testing.T) {
	o := testServeOptions(t, t.TempDir())
	if o.jobs != (jobOptions{workers: 4, lease: 30 * time.Second, poll: 2 * time.Second, retention: 168 * time.Hour, testConcurrency: 8}) {
		t.Errorf("defaults = %+v", o.jobs)
	}
	cases := []struct {
		args []string
		want string // "" when accepted
	}{
		{[]string{"--job-workers", "1"}, ""},
		{[]string{"--job-workers", "0"}, "--job-workers must be at least 1"},
		{[]string{"--job-lease", "1s"}, ""},
		{[]string{"--job-lease", "999ms"}, "--job-lease must be at least 1s"},
		{[]string{"--job-poll", "1ms"}, ""},
		{[]string{"--job-poll", "0s"}, "--job-poll must be more than 0"},
		{[]string{"--job-retention", "0s"}, ""},
		{[]string{"--job-retention", "-1s"}, "--job-retention must be 0"},
		{[]string{"--test-concurrency", "1"}, ""},
		{[]string{"--test-concurrency", "0"}, "--test-concurrency must be at least 1"},
	}
	for _, c := range cases {
		o := testServeOptions(t, t.TempDir(), c.args...)
		err := o.jobs.check()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v, want it accepted", c.args, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
		if c.want != "" {
			if err := runServe(context.Background(), o, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("serve %v: %v", c.args, err)
			}
		}
	}
}

// TestServeDrainsJobsBeforeClosing: a job still running when serve is stopped is cut
// once --drain-timeout passes and stored queued again (attempt given back) before the
// database closes; the next serve runs it to its end.
func TestServeDrainsJobsBeforeClosing(t *testing.T) {
	var hold atomic.Bool
	hold.Store(true)
	started := make(chan struct{}, 4)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		if hold.Load() {
			<-r.Context().Done() // never answers while held: the fetch is cut by the stop
			return
		}
		fmt.Fprint(w, "Returns are free within thirty days.")
	}))
	defer page.Close()
	dir := t.TempDir()
	args := []string{"--allow-private-urls", "--drain-timeout", "300ms"}
	out, logs := &syncBuffer{}, &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, testServeOptions(t, dir, args...), out, logs) }()
	var addr string
	eventually(t, "the listening log line", func() bool { addr = logAddr(logs.String(), "listening"); return addr != "" })
	token := regexp.MustCompile(`api token: (\S+)`).FindStringSubmatch(out.String())[1]
	req, _ := http.NewRequest("POST", "http://"+addr+"/api/v1/knowledge-bases", strings.NewReader(`{"name":"Returns","urls":["`+page.URL+`/returns"]}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("create: %d", resp.StatusCode)
	}
	<-started
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "job runner stopped before its jobs ended") {
		t.Errorf("no log of the cut job:\n%s", logs.String())
	}
	job := onlyJob(t, dir)
	if job.Status != data.JobQueued || job.Attempt != 0 || job.LeaseOwner != "" {
		t.Fatalf("the job after the stop: %+v; want queued again, its attempt given back", job)
	}

	hold.Store(false)
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	logs = &syncBuffer{}
	go func() { done <- runServe(ctx, testServeOptions(t, dir, args...), io.Discard, logs) }()
	eventually(t, "the restarted server's listening line", func() bool { return logAddr(logs.String(), "listening") != "" })
	<-started
	eventually(t, "the job's end", func() bool {
		req, _ := http.NewRequest("GET", "http://"+logAddr(logs.String(), "listening")+"/api/v1/jobs/"+job.ID, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return strings.Contains(string(body), `"status":"succeeded"`)
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if job := onlyJob(t, dir); job.Status != data.JobSucceeded || job.Attempt != 1 {
		t.Errorf("the job after the second serve: %+v; want succeeded on its first counted attempt", job)
	}
}

// onlyJob opens the stopped installation in dir and returns its one job.
func onlyJob(t *testing.T, dir string) *data.JobRecord {
	t.Helper()
	db, err := bolt.Open(dir, bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var jobs []*data.JobRecord
	err = db.View(context.Background(), func(tx service.Tx) error {
		all, err := tx.AllWorkspaces()
		for _, w := range all {
			list, _, err := tx.Jobs(w.ID, data.PageRequest{PerPage: 100})
			if err != nil {
				return err
			}
			jobs = append(jobs, list...)
		}
		return err
	})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("jobs: %v, %v; want one", jobs, err)
	}
	return jobs[0]
}
