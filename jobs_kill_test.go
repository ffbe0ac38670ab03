package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// fetchLog is the page server's record of each url fetch job run: a run starts when its
// request arrives; the first run never gets an answer (its server is killed meanwhile).
type fetchLog struct {
	mu      sync.Mutex
	starts  int
	started chan struct{} // closed when the first run has started
}

func (l *fetchLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.starts
}

// TestJobFinishedOnceAfterKill builds the real binary, adds a url source, and SIGKILLs
// the server while the source's fetch job runs (its request is held by the page
// server). The restarted server claims the job and finishes it: the page is fetched
// twice (the killed run and the finishing one), the source is indexed once (one
// source_indexed event: only the finishing run ended), and the job ends succeeded on its
// second attempt, never run by both servers at once. On bbolt the restarted server owns
// the file alone, so it runs the dead one's job at once: the lease there is ten minutes,
// far past the test's wait. On PostgreSQL another replica might hold the lease, so the
// restarted server waits it out: two seconds there.
func TestJobFinishedOnceAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it")
	}
	tmp := t.TempDir()
	bin := voiceapiBinary(t)
	log := &fetchLog{started: make(chan struct{})}
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.mu.Lock()
		log.starts++
		first := log.starts == 1
		log.mu.Unlock()
		if first {
			close(log.started)
			<-r.Context().Done() // held until its server dies
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "Parcels are delivered within three working days.")
	}))
	defer page.Close()

	dataDir := filepath.Join(tmp, "data")
	lease := "10m"
	if testkit.OnPostgres() {
		lease = "2s"
	}
	flags := []string{"--allow-private-urls", "--job-lease", lease, "--job-poll", "200ms", "--rate-limit", "0"}
	srv, stdout := startServer(t, bin, dataDir, flags...)
	token := bootstrapToken(t, stdout)
	status, body := call(t, "POST", srv.url+"/api/v1/knowledge-bases", token, `{"name":"Shipping","urls":["`+page.URL+`/shipping"]}`)
	if status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	var kb struct {
		Data struct {
			ID   string
			URLs []struct{ ID, Status string } `json:"urls"`
		}
	}
	json.Unmarshal(body, &kb)
	select {
	case <-log.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the fetch job did not start")
	}
	srv.cmd.Process.Signal(syscall.SIGKILL)
	srv.cmd.Wait()

	srv, _ = startServer(t, bin, dataDir, flags...)
	deadline := time.Now().Add(60 * time.Second)
	for sourceStatus(t, srv.url, token, kb.Data.ID) != data.SourceIndexed {
		if time.Now().After(deadline) {
			t.Fatalf("the source was not indexed within a minute of the restart (fetches %d, lease %s)", log.count(), lease)
		}
		time.Sleep(50 * time.Millisecond)
	}
	events := indexedEvents(t, srv.url, token, kb.Data.URLs[0].ID)
	srv.cmd.Process.Signal(syscall.SIGTERM)
	srv.cmd.Wait()
	if n := log.count(); n != 2 {
		t.Errorf("the page was fetched %d times, want 2 (the killed run, the finishing run)", n)
	}
	if events != 1 {
		t.Errorf("%d source_indexed events for the source, want 1", events)
	}
	jobs := storedJobs(t, dataDir)
	if len(jobs) != 1 || jobs[0].Status != data.JobSucceeded || jobs[0].Attempt != 2 || jobs[0].LeaseOwner != "" {
		t.Errorf("jobs after the restart: %+v; want the one fetch job, succeeded on attempt 2", jobs)
	}
}

// sourceStatus reads the status of the knowledge base's first url source.
func sourceStatus(t *testing.T, url, token, kbID string) string {
	t.Helper()
	status, body := call(t, "GET", url+"/api/v1/knowledge-bases/"+kbID, token, "")
	if status != 200 {
		t.Fatalf("knowledge base: %d %s", status, body)
	}
	var kb struct {
		Data struct {
			URLs []struct{ Status string } `json:"urls"`
		}
	}
	json.Unmarshal(body, &kb)
	return kb.Data.URLs[0].Status
}

// indexedEvents counts the source_indexed events of a source in the audit log.
func indexedEvents(t *testing.T, url, token, sourceID string) int {
	t.Helper()
	status, body := call(t, "GET", url+"/api/v1/audit-log?per_page=100&type="+data.EventKnowledgeSourceIndexed, token, "")
	if status != 200 {
		t.Fatalf("audit log: %d %s", status, body)
	}
	var page struct {
		Data []struct {
			Data struct {
				Source struct{ ID string } `json:"source"`
			} `json:"data"`
		} `json:"data"`
	}
	json.Unmarshal(body, &page)
	n := 0
	for _, e := range page.Data {
		if e.Data.Source.ID == sourceID {
			n++
		}
	}
	return n
}

// storedJobs reads every job of the stopped installation in dataDir (on the engine the
// tests run on), on bbolt after checking the file's consistency (withStoppedStore).
func storedJobs(t *testing.T, dataDir string) []*data.JobRecord {
	t.Helper()
	var out []*data.JobRecord
	withStoppedStore(t, dataDir, func(tx service.Tx) error {
		list, err := tx.AllWorkspaces()
		if err != nil {
			return err
		}
		for _, w := range list {
			jobs, _, err := tx.Jobs(w.ID, data.PageRequest{PerPage: 100})
			if err != nil {
				return err
			}
			out = append(out, jobs...)
		}
		return nil
	})
	return out
}
