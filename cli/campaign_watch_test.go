package cli_test

import (
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// watching is a `campaign show --watch` running in the background.
type watching struct {
	out  *testkit.SyncBuffer
	errc chan error
}

// watch starts `campaign show ID --watch` with a short interval, standard error on errOut.
func (s *campaignServer) watch(ctx context.Context, id string, errOut io.Writer) *watching {
	w := &watching{out: &testkit.SyncBuffer{}, errc: make(chan error, 1)}
	root := cli.NewRootCommand(w.out, errOut)
	root.SetArgs([]string{"campaign", "show", id, "--watch", "--interval", "5ms", "--server", s.URL, "--token", s.Owner.Token})
	go func() { w.errc <- root.ExecuteContext(ctx) }()
	return w
}

// waitFor waits until cond holds, failing the test after a bound generous for a loaded
// machine; it polls, so a quick machine waits no longer than needed.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30s for %s", what)
		}
	}
}

// done waits for the watch to end and returns its error.
func (w *watching) done(t *testing.T) error {
	t.Helper()
	select {
	case err := <-w.errc:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("the watch did not end within 30s")
		return nil
	}
}

// answer claims the due dial tasks, up to max, and reports each call answered and ended,
// as a voice runtime does.
func (s *campaignServer) answer(max int) {
	s.t.Helper()
	ctx := context.Background()
	claim, err := s.runtime.Campaigns.ClaimDialTasks(ctx, data.DialClaim{Max: max})
	if err != nil || len(claim.Tasks) != max {
		s.t.Fatalf("claim: %v, %+v", err, claim)
	}
	for _, task := range claim.Tasks {
		if _, _, err := s.runtime.Calls.Update(ctx, task.Call.ID, data.CallUpdate{Status: data.Some(data.CallOngoing)}); err != nil {
			s.t.Fatal(err)
		}
		if _, _, err := s.runtime.Calls.Update(ctx, task.Call.ID, data.CallUpdate{Status: data.Some(data.CallEnded), DisconnectionReason: data.Some("user_hangup")}); err != nil {
			s.t.Fatal(err)
		}
	}
}

// TestCampaignWatchUntilCompleted: --watch prints a line each time the counts change
// while the campaign's calls end one by one, and returns once it is completed, with the
// campaign shown in full.
func TestCampaignWatchUntilCompleted(t *testing.T) {
	s := newCampaignServer(t)
	s.voiceapi(s.createArgs(file(t, "two.csv", "phone_number\n+14155550101\n+14155550102\n"))...)
	id := s.campaigns()[0].ID
	w := s.watch(context.Background(), id, &testkit.SyncBuffer{})
	waitFor(t, "the first reading", func() bool { return strings.Contains(w.out.String(), "running: 0 of 2 finished, 2 pending\n") })
	s.answer(1)
	waitFor(t, "one call's end", func() bool {
		return strings.Contains(w.out.String(), "running: 1 of 2 finished, 1 completed (answered 1), 1 pending\n")
	})
	select {
	case err := <-w.errc:
		t.Fatalf("the watch ended with a recipient left: %v", err)
	default:
	}
	s.answer(1)
	if err := w.done(t); err != nil {
		t.Fatal(err)
	}
	out := w.out.String()
	if !strings.Contains(out, "completed: 2 of 2 finished, 2 completed (answered 2)\n") || !strings.Contains(out, `"two": completed`) ||
		!regexp.MustCompile(`\n    answered +2\n`).MatchString(out) || !strings.Contains(out, "  finished  2026-03-02T10:00:00Z") {
		t.Errorf("the watch's output:\n%s", out)
	}
}

// TestCampaignWatchOnTerminal: on a terminal the watch draws a bar of finished
// recipients and the status on standard error, clears it at the end, and prints no
// progress lines.
func TestCampaignWatchOnTerminal(t *testing.T) {
	s := newCampaignServer(t)
	s.voiceapi(s.createArgs(file(t, "two.csv", "phone_number\n+14155550101\n+14155550102\n"))...)
	id := s.campaigns()[0].ID
	term := &cli.FakeTerminal{}
	w := s.watch(context.Background(), id, term)
	waitFor(t, "the bar", func() bool { return strings.Contains(term.String(), "campaign two (running)   0% |") })
	s.answer(1)
	waitFor(t, "the bar at one of two", func() bool { return strings.Contains(term.String(), "campaign two (running)  50% |") })
	s.answer(1)
	if err := w.done(t); err != nil {
		t.Fatal(err)
	}
	if out := w.out.String(); strings.Contains(out, "finished,") || !strings.Contains(out, `"two": completed`) {
		t.Errorf("standard output on a terminal:\n%s", out)
	}
	if bar := term.String(); !strings.Contains(bar, "(1/2)") || !strings.Contains(bar, "campaign two (completed)") || !strings.HasSuffix(bar, " \r") {
		t.Errorf("the bar: %q", bar)
	}
}

// TestCampaignWatchStopped: stopping the watch (Ctrl-C cancels the command's context)
// ends the command with ErrInterrupted (exit 130, so that a script waiting for the
// campaign's end stops too), prints the campaign as last read and leaves it running.
func TestCampaignWatchStopped(t *testing.T) {
	s := newCampaignServer(t)
	s.voiceapi(s.createArgs(file(t, "one.csv", "phone_number\n+14155550101\n"))...)
	id := s.campaigns()[0].ID
	ctx, cancel := context.WithCancel(context.Background())
	errOut := &testkit.SyncBuffer{}
	w := s.watch(ctx, id, errOut)
	waitFor(t, "the first reading", func() bool { return strings.Contains(w.out.String(), "running: 0 of 1 finished") })
	cancel()
	if err := w.done(t); cli.ExitCode(err) != 130 {
		t.Fatalf("a stopped watch: %v (exit %d), want exit 130", err, cli.ExitCode(err))
	}
	if !strings.Contains(w.out.String(), "Campaign "+id+` "one": running`) {
		t.Errorf("the campaign as last read is not printed:\n%s", w.out.String())
	}
	if !strings.Contains(errOut.String(), "Stopped watching; campaign "+id+" goes on.") {
		t.Errorf("standard error: %q", errOut.String())
	}
	if c := s.campaigns()[0]; c.Status != data.CampaignRunning {
		t.Errorf("the campaign after the watch stopped: %s", c.Status)
	}
}
