package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServeStreamsEventsAndEndsThemOnSIGTERM runs the real serve command: an event
// committed by a request reaches an open event stream, and SIGTERM ends the stream
// cleanly and lets serve return, though a stream never ends by itself.
func TestServeStreamsEventsAndEndsThemOnSIGTERM(t *testing.T) {
	dir := t.TempDir()
	out, logs := &syncBuffer{}, &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, testServeOptions(t, dir, "--drain-timeout", "60s"), out, logs) }()
	var addr string
	eventually(t, "the listening log line", func() bool { addr = logAddr(logs.String(), "listening"); return addr != "" })
	m := regexp.MustCompile(`api token: (\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no bootstrap token printed:\n%s", out.String())
	}
	token := m[1]

	req, _ := http.NewRequest("GET", "http://"+addr+"/api/v1/events/stream?types=agent.created", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("opening the stream: %v %v", resp, err)
	}
	defer resp.Body.Close()
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				lines <- "end: " + err.Error()
				return
			}
			lines <- strings.TrimSuffix(line, "\n")
		}
	}()

	create, _ := http.NewRequest("POST", "http://"+addr+"/api/v1/agents", strings.NewReader(`{"name":"streamed"}`))
	create.Header.Set("Authorization", "Bearer "+token)
	create.Header.Set("Content-Type", "application/json")
	cr, err := http.DefaultClient.Do(create)
	if err != nil || cr.StatusCode != 201 {
		t.Fatalf("creating an agent: %v %v", cr, err)
	}
	io.Copy(io.Discard, cr.Body)
	cr.Body.Close()
	waitLine(t, lines, "event: agent.created")

	start := time.Now()
	cancel() // SIGTERM
	waitLine(t, lines, "end: EOF")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not return: the stream held the drain")
	}
	t.Logf("serve stopped %s after SIGTERM with a stream open", time.Since(start).Round(time.Millisecond))
}

// waitLine reads lines until one equals want.
func waitLine(t *testing.T, lines <-chan string, want string) {
	t.Helper()
	timeout := time.After(30 * time.Second) // a hang guard
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the stream ended before %q", want)
			}
			if l == want {
				return
			}
		case <-timeout:
			t.Fatalf("no %q within 10s", want)
		}
	}
}
