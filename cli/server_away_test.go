package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestTestCommandWaitsForTheServer: a server that stops answering while `voiceapi test`
// follows its run (a restart, a deploy) is waited for until --timeout, since the run is
// durable: the command reads the verdict once the server answers again and exits 0 on a
// pass, rather than failing a CI job whose tests pass.
func TestTestCommandWaitsForTheServer(t *testing.T) {
	s := newTestServer(t)
	r := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "Trattoria", "llm_config": json.RawMessage(s.llmConfig())})
	testkit.Expect(t, r, 201)
	agent := r.Data()["id"].(string)
	testkit.Expect(t, s.Do("POST", "/api/v1/agents/"+agent+"/tests", s.Owner.Token,
		`{"name":"greets","user":{"script":["hello"]},"criteria":[{"type":"says","pattern":"Welcome"}]}`), 201)

	// The first reads of the run get no answer (the connection closed), more than the
	// client's own retries cover.
	front := awayFront(t, s.URL, "/test-runs/", 0)
	var out, errOut bytes.Buffer
	root := cli.NewRootCommand(&out, &errOut)
	root.SetArgs([]string{"test", "Trattoria", "--poll", "20ms", "--server", front.URL, "--token", s.Owner.Token})
	err := root.ExecuteContext(context.Background())
	if err != nil || !strings.Contains(out.String(), "the server does not answer") || !strings.Contains(out.String(), "PASSED  greets") {
		t.Errorf("exit %d: %v\n%s%s", cli.ExitCode(err), err, out.String(), errOut.String())
	}
}

// awayFront is a proxy to server whose GETs of a path holding part get no answer (the
// connection closed) from the one after the first answered ones on, 6 of them: a server
// restarting, for longer than the client's own retries.
func awayFront(t *testing.T, server, part string, answered int32) *httptest.Server {
	t.Helper()
	target, _ := url.Parse(server)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var seen atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, part) {
			if n := seen.Add(1); n > answered && n <= answered+6 {
				panic(http.ErrAbortHandler)
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	return front
}

// TestAnalyzeWaitsForTheServer: calls analyze --wait follows its job through a server
// that stops answering (the job is durable), and prints the analysis once it answers.
func TestAnalyzeWaitsForTheServer(t *testing.T) {
	s := newTestServer(t)
	s.Svc.Analysis.Configure(cli.AnalysisOptions(cli.LLMSettings{AllowURLPrefixes: []string{s.stand.URL + "/"}}))
	cfg := s.stand.LLMConfig()
	r := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "Trattoria", "llm_config": cfg,
		"analysis_config": map[string]any{"summary": true}})
	testkit.Expect(t, r, 201)
	call := s.Do("POST", "/api/v1/calls", s.Owner.Token, map[string]any{"agent_id": r.Data()["id"], "direction": "web", "status": "ended",
		"transcript": []map[string]any{{"role": "user", "content": "A table for four.", "start_ms": 0}}})
	testkit.Expect(t, call, 201)
	s.stand.Queue(llmtest.JSON(map[string]any{"summary": "A table for four."}))
	front := awayFront(t, s.URL, "/api/v1/jobs/", 0)

	var out, errOut bytes.Buffer
	root := cli.NewRootCommand(&out, &errOut)
	root.SetArgs([]string{"calls", "analyze", call.Data()["id"].(string), "--wait", "--poll", "20ms", "--server", front.URL, "--token", s.Owner.Token})
	err := root.ExecuteContext(context.Background())
	if err != nil || !strings.Contains(out.String(), "summary: A table for four.") {
		t.Errorf("exit %d: %v\n%s%s", cli.ExitCode(err), err, out.String(), errOut.String())
	}
}

// TestCampaignWatchThroughAServerAway: campaign show --watch watches on through a server
// that stops answering (the campaign goes on without it), says so once, and ends with the
// campaign.
func TestCampaignWatchThroughAServerAway(t *testing.T) {
	s := newCampaignServer(t)
	s.voiceapi(s.createArgs(file(t, "list.csv", "phone_number\n+14155550101\n"), "--name", "watched")...)
	id := s.campaigns()[0].ID
	front := awayFront(t, s.URL, "/api/v1/campaigns/", 1)

	var out, errOut testkit.SyncBuffer
	root := cli.NewRootCommand(&out, &errOut)
	root.SetArgs([]string{"campaign", "show", id, "--watch", "--interval", "5ms", "--server", front.URL, "--token", s.Owner.Token})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(context.Background()) }()
	waitFor(t, "the watch to meet the server away", func() bool { return strings.Contains(errOut.String(), "does not answer") })
	testkit.Expect(t, s.Do("POST", "/api/v1/campaigns/"+id+"/cancel", s.Owner.Token, nil), 200)
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the watch did not end within 30s")
	}
	if err != nil || !strings.Contains(out.String(), "canceled") || strings.Count(errOut.String(), "does not answer") != 1 {
		t.Errorf("exit %d: %v\n%s%s", cli.ExitCode(err), err, out.String(), errOut.String())
	}
}
