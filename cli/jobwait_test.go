package cli

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
)

// TestJobWaitTimeoutDuringARead: --timeout running out while the job is being read says
// so, as it does between reads, instead of the HTTP client's "context deadline exceeded".
// The server here answers job reads slower than the timeout.
func TestJobWaitTimeoutDuringARead(t *testing.T) {
	s, stand := chatServerWith(t, func(handler http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/v1/jobs/") {
				time.Sleep(300 * time.Millisecond)
			}
			handler.ServeHTTP(w, r)
		})
	})
	c := s.c
	ctx := context.Background()

	cfg := stand.LLMConfig()
	name := "Bookings"
	agent, _, err := c.Agents.Create(ctx, client.AgentInput{Name: &name, LLMConfig: &cfg, AnalysisConfig: &data.AnalysisConfig{Summary: true}})
	if err != nil {
		t.Fatal(err)
	}
	ended := data.CallEnded
	call, _, err := c.Calls.Register(ctx, data.CallCreate{AgentID: agent.ID, Direction: "web", Status: &ended,
		Transcript: []data.TranscriptItem{{Role: "user", Content: "A table for four."}}})
	if err != nil {
		t.Fatal(err)
	}
	job, err := c.Calls.Analyze(ctx, call.ID)
	if err != nil {
		t.Fatal(err)
	}
	w := &jobWait{poll: time.Millisecond, timeout: 100 * time.Millisecond}
	_, err = w.waitJob(ctx, c, job, func(*data.Job) {})
	want := "job " + job.ID + " is still " + job.Status + " after --timeout 100ms"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("the wait ended with %v, want %q…", err, want)
	}
}
