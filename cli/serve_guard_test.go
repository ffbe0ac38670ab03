package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/voiceapi/voiceapi/internal/embedtest"
)

// serveClient calls a running serve's API with a token.
type serveClient struct {
	t           *testing.T
	addr, token string
}

// do sends a JSON body (none when "") and decodes the answer's data into out (may be nil).
func (c serveClient) do(method, path, body string, out any) int {
	c.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, "http://"+c.addr+"/api/v1"+path, r)
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, &struct{ Data any }{out}); err != nil {
			c.t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
	return resp.StatusCode
}

// TestServeURLPrefixCoversEveryChannel runs the real serve with --allow-url-prefix (and no
// --allow-private-urls) naming paths of a server on loopback: a webhook under the prefix
// receives its test event and a url source under it is fetched and indexed, while a
// webhook and a url source on the same host outside it are refused by the guard; a
// workspace's embedding provider is used under a prefix and refused outside the prefixes.
// Before the flag covered more than conversations, the webhook and url source under the
// prefix were refused too.
func TestServeURLPrefixCoversEveryChannel(t *testing.T) {
	site := startPrivateSite(t)
	embedder := embedtest.Start()
	t.Cleanup(embedder.Close)
	refusedEmbedder := embedtest.Start()
	t.Cleanup(refusedEmbedder.Close)

	c, workspaceID := startGuardedServe(t, "--allow-url-prefix", site.URL+"/allowed/", "--allow-url-prefix", embedder.URL+"/", "--job-poll", "50ms", "--rate-limit", "0")
	site.checkWebhooksGuarded(t, c)
	kbID := site.checkURLSourcesGuarded(t, c)
	checkEmbeddingsGuarded(t, c, workspaceID, kbID, embedder, refusedEmbedder)
}

// privateSite is a server on loopback (private to the guard) that counts the webhook
// posts under /allowed/ and /other/ and serves a page under each.
type privateSite struct {
	*httptest.Server
	allowedHooks, otherHooks atomic.Int32
}

// startPrivateSite starts a privateSite, closed when the test ends.
func startPrivateSite(t *testing.T) *privateSite {
	t.Helper()
	site := &privateSite{}
	site.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/allowed/hook":
			site.allowedHooks.Add(1)
		case "/other/hook":
			site.otherHooks.Add(1)
		case "/allowed/page", "/other/page":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "Returns are free within thirty days of delivery.")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	return site
}

// startGuardedServe runs the real serve with args until the test ends (stopped first,
// before the servers it reaches) and returns a client of its bootstrap token and the
// token's workspace.
func startGuardedServe(t *testing.T, args ...string) (serveClient, string) {
	t.Helper()
	out, logs := &syncBuffer{}, &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, testServeOptions(t, t.TempDir(), args...), out, logs) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	var addr string
	eventually(t, "the listening log line", func() bool { addr = logAddr(logs.String(), "listening"); return addr != "" })
	m := regexp.MustCompile(`api token: (\S+)\n  workspace: (\S+)`).FindStringSubmatch(out.String())
	return serveClient{t: t, addr: addr, token: m[1]}, m[2]
}

// checkWebhooksGuarded checks that the test event reaches the receiver under the prefix
// only: the other webhook's delivery fails on the SSRF guard, never posted.
func (site *privateSite) checkWebhooksGuarded(t *testing.T, c serveClient) {
	t.Helper()
	hooks := map[string]string{}
	for _, path := range []string{"/allowed/hook", "/other/hook"} {
		var wh struct{ ID string }
		if code := c.do("POST", "/webhooks", `{"url":"`+site.URL+path+`","events":["*"]}`, &wh); code != 201 {
			t.Fatalf("create webhook %s: %d", path, code)
		}
		if code := c.do("POST", "/webhooks/"+wh.ID+"/test", "", nil); code != 202 {
			t.Fatalf("test webhook %s: %d", path, code)
		}
		hooks[path] = wh.ID
	}
	eventually(t, "the allowed webhook's delivery", func() bool { return site.allowedHooks.Load() > 0 })
	eventually(t, "the other webhook's refusal", func() bool {
		var deliveries []struct{ Status, Error string }
		c.do("GET", "/webhooks/"+hooks["/other/hook"]+"/deliveries", "", &deliveries)
		for _, d := range deliveries {
			if strings.Contains(d.Error, "SSRF guard") {
				return true
			}
		}
		return false
	})
	if n := site.otherHooks.Load(); n != 0 {
		t.Errorf("the webhook outside the prefix was posted %d times", n)
	}
}

// checkURLSourcesGuarded checks that url sources are fetched under the prefix and
// refused outside it; it returns their knowledge base's id.
func (site *privateSite) checkURLSourcesGuarded(t *testing.T, c serveClient) string {
	t.Helper()
	var kb struct{ ID string }
	body := `{"name":"Returns","urls":["` + site.URL + `/allowed/page","` + site.URL + `/other/page"]}`
	if code := c.do("POST", "/knowledge-bases", body, &kb); code != 201 {
		t.Fatalf("create knowledge base: %d", code)
	}
	type urlSource struct {
		URL, Status string
		Error       *string
	}
	eventually(t, "both url sources settled", func() bool {
		var got struct{ URLs []urlSource }
		c.do("GET", "/knowledge-bases/"+kb.ID, "", &got)
		settled := 0
		for _, u := range got.URLs {
			if u.Status != "pending" {
				settled++
			}
		}
		if settled < 2 {
			return false
		}
		for _, u := range got.URLs {
			allowed := strings.HasSuffix(u.URL, "/allowed/page")
			if allowed && u.Status != "indexed" || !allowed && (u.Status != "failed" || u.Error == nil || !strings.Contains(*u.Error, "internal address")) {
				t.Errorf("url source %s: %s %v", u.URL, u.Status, u.Error)
			}
		}
		return true
	})
	return kb.ID
}

// checkEmbeddingsGuarded checks that a workspace's embedding provider is used under a
// prefix and refused outside the prefixes.
func checkEmbeddingsGuarded(t *testing.T, c serveClient, workspaceID, kbID string, embedder, refusedEmbedder *embedtest.Server) {
	t.Helper()
	embeddingsStatus := func() (string, string) {
		var got struct {
			Embeddings struct {
				Status string
				Error  *string
			}
		}
		c.do("GET", "/knowledge-bases/"+kbID, "", &got)
		if got.Embeddings.Error == nil {
			return got.Embeddings.Status, ""
		}
		return got.Embeddings.Status, *got.Embeddings.Error
	}
	setProvider := func(baseURL string) {
		t.Helper()
		if code := c.do("PUT", "/workspaces/"+workspaceID, `{"embeddings":{"base_url":"`+baseURL+`","model":"m"}}`, nil); code != 200 {
			t.Fatalf("set the workspace's embeddings: %d", code)
		}
	}
	setProvider(embedder.BaseURL())
	eventually(t, "the allowed provider's vectors", func() bool { status, _ := embeddingsStatus(); return status == "ready" })
	// The job that stored them ends after they show; a change of provider while it runs
	// would be merged into it (one pending embed job a knowledge base).
	eventually(t, "the embed job's end", func() bool { return c.embedJobsPending() == 0 })
	setProvider(refusedEmbedder.BaseURL())
	eventually(t, "the refused provider's failure", func() bool {
		status, why := embeddingsStatus()
		return status == "failing" && strings.Contains(why, "internal address")
	})
	if refusedEmbedder.Requests() != 0 || embedder.Requests() == 0 {
		t.Errorf("embedding requests: %d to the refused provider, %d to the allowed one", refusedEmbedder.Requests(), embedder.Requests())
	}
}

// embedJobsPending reads /metrics for the embed jobs queued or running.
func (c serveClient) embedJobsPending() int {
	c.t.Helper()
	req, _ := http.NewRequest("GET", "http://"+c.addr+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	pending := 0
	for _, name := range []string{"voiceapi_job_queue_depth", "voiceapi_jobs_running"} {
		for _, m := range families[name].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" && l.GetValue() == "knowledge_base.embed" {
					pending += int(m.GetGauge().GetValue())
				}
			}
		}
	}
	return pending
}
