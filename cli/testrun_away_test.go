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

	"github.com/voiceapi/voiceapi/cli"
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
	target, _ := url.Parse(s.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var dropped atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/test-runs/") && dropped.Add(1) <= 6 {
			panic(http.ErrAbortHandler)
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)

	var out, errOut bytes.Buffer
	root := cli.NewRootCommand(&out, &errOut)
	root.SetArgs([]string{"test", "Trattoria", "--poll", "20ms", "--server", front.URL, "--token", s.Owner.Token})
	err := root.ExecuteContext(context.Background())
	if err != nil || !strings.Contains(out.String(), "the server does not answer") || !strings.Contains(out.String(), "PASSED  greets") {
		t.Errorf("exit %d: %v\n%s%s", cli.ExitCode(err), err, out.String(), errOut.String())
	}
}
