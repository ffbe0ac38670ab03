package cli_test

import (
	"context"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
)

// status reads a campaign's status through the API.
func (s *campaignServer) status(id string) string {
	s.t.Helper()
	c, _, err := s.owner.Campaigns.Get(context.Background(), id)
	if err != nil {
		s.t.Fatal(err)
	}
	return c.Status
}

// TestCampaignPauseResumeCancel: pause and resume say the new status; cancel needs
// --yes without a terminal, asks on one (a "no" changes nothing and exits 1), and
// cancels on "yes" or with --yes; acting on an unknown campaign is a 404 message.
func TestCampaignPauseResumeCancel(t *testing.T) {
	s := newCampaignServer(t)
	csv := file(t, "list.csv", "phone_number\n+14155550101\n+14155550102\n")
	s.voiceapi(s.createArgs(csv, "--name", "first")...)
	s.voiceapi(s.createArgs(file(t, "one.csv", "phone_number\n+14155550103\n"), "--name", "second")...)
	camps := s.campaigns()
	second, first := camps[0].ID, camps[1].ID

	if out := s.voiceapi("campaign", "pause", first); !strings.Contains(out, `Campaign `+first+` "first" is paused: 0 of 2 finished, 2 pending.`) {
		t.Errorf("pause: %q", out)
	}
	if got := s.status(first); got != data.CampaignPaused {
		t.Fatalf("after pause: %s", got)
	}
	if out := s.voiceapi("campaign", "resume", first); !strings.Contains(out, `"first" is running`) || s.status(first) != data.CampaignRunning {
		t.Errorf("resume: %q", out)
	}

	if got := s.refused("campaign", "cancel", first); !strings.Contains(got, "--yes") || s.status(first) != data.CampaignRunning {
		t.Errorf("cancel without a terminal nor --yes: %s", got)
	}
	r := s.run(context.Background(), "", cli.TerminalInput{Reader: strings.NewReader("n\n")}, nil, "campaign", "cancel", first)
	if r.err == nil || cli.ExitCode(r.err) != 1 || !strings.Contains(r.errOut, `Cancel campaign `+first+` "first" (running; 2 of 2 recipients not finished)? Nothing more will be dialed. [y/N]`) ||
		s.status(first) != data.CampaignRunning {
		t.Errorf("cancel answered no: %v %q, status %s", r.err, r.errOut, s.status(first))
	}
	r = s.run(context.Background(), "", cli.TerminalInput{Reader: strings.NewReader("yes\n")}, nil, "campaign", "cancel", first)
	if r.err != nil || !strings.Contains(r.out, `"first" is canceled: 2 of 2 finished, 2 canceled.`) || s.status(first) != data.CampaignCanceled {
		t.Errorf("cancel answered yes: %v %q", r.err, r.out)
	}
	if out := s.voiceapi("campaign", "cancel", second, "--yes"); !strings.Contains(out, `"second" is canceled`) || s.status(second) != data.CampaignCanceled {
		t.Errorf("cancel --yes: %q", out)
	}
	if got := s.refused("campaign", "resume", first); !strings.Contains(got, "409 conflict") {
		t.Errorf("resuming a canceled campaign: %s", got)
	}
	for _, verb := range []string{"pause", "resume", "recipients"} {
		if got := s.refused("campaign", verb, "cmp_01JD6X0000000000000000000"); !strings.Contains(got, "404 not_found") {
			t.Errorf("%s of an unknown campaign: %s", verb, got)
		}
	}
	if got := s.refused("campaign", "cancel", "cmp_01JD6X0000000000000000000", "--yes"); !strings.Contains(got, "404 not_found") {
		t.Errorf("cancel of an unknown campaign: %s", got)
	}
}

// TestCampaignDelete: delete refuses an open campaign with the server's 409 (cancel it
// first), needs --yes without a terminal, asks on one (a "no" keeps the campaign), and
// deletes a canceled one on "yes" or with --yes; then the campaign is not found.
func TestCampaignDelete(t *testing.T) {
	s := newCampaignServer(t)
	csv := file(t, "list.csv", "phone_number\n+14155550101\n+14155550102\n")
	s.voiceapi(s.createArgs(csv, "--name", "first")...)
	s.voiceapi(s.createArgs(file(t, "one.csv", "phone_number\n+14155550103\n"), "--name", "second")...)
	camps := s.campaigns()
	second, first := camps[0].ID, camps[1].ID

	if got := s.refused("campaign", "delete", first, "--yes"); !strings.Contains(got, "409 conflict") || !strings.Contains(got, "cancel it first") {
		t.Errorf("deleting a running campaign: %s", got)
	}
	s.voiceapi("campaign", "cancel", first, "--yes")
	s.voiceapi("campaign", "cancel", second, "--yes")
	if got := s.refused("campaign", "delete", first); !strings.Contains(got, "--yes") || s.status(first) != data.CampaignCanceled {
		t.Errorf("delete without a terminal nor --yes: %s", got)
	}
	r := s.run(context.Background(), "", cli.TerminalInput{Reader: strings.NewReader("n\n")}, nil, "campaign", "delete", first)
	if r.err == nil || cli.ExitCode(r.err) != 1 || !strings.Contains(r.errOut, `Delete campaign `+first+` "first" (canceled) with its 2 recipients? This cannot be undone. [y/N]`) ||
		s.status(first) != data.CampaignCanceled {
		t.Errorf("delete answered no: %v %q", r.err, r.errOut)
	}
	r = s.run(context.Background(), "", cli.TerminalInput{Reader: strings.NewReader("yes\n")}, nil, "campaign", "delete", first)
	if r.err != nil || !strings.Contains(r.out, "Campaign "+first+" deleted with its recipients.") {
		t.Errorf("delete answered yes: %v %q", r.err, r.out)
	}
	// One recipient is counted as one.
	r = s.run(context.Background(), "", cli.TerminalInput{Reader: strings.NewReader("n\n")}, nil, "campaign", "delete", second)
	if !strings.Contains(r.errOut, `"second" (canceled) with its 1 recipient? This cannot be undone.`) {
		t.Errorf("delete of one recipient asked: %q", r.errOut)
	}
	if out := s.voiceapi("campaign", "delete", second, "--yes"); !strings.Contains(out, second+" deleted") {
		t.Errorf("delete --yes: %q", out)
	}
	for _, id := range []string{first, second} {
		if got := s.refused("campaign", "show", id); !strings.Contains(got, "404 not_found") {
			t.Errorf("show after the delete: %s", got)
		}
	}
	if got := s.refused("campaign", "delete", first, "--yes"); !strings.Contains(got, "404 not_found") {
		t.Errorf("a second delete: %s", got)
	}
}

// TestCampaignDeleteRefusesBadIDs: `voiceapi campaign delete ID --yes` given an id that
// names no campaign (empty: the client's refusal; of the wrong shape, of another kind, a path's dot segments, the
// campaign's id with more around it) is a 404 message, and the canceled campaign is there.
func TestCampaignDeleteRefusesBadIDs(t *testing.T) {
	s := newCampaignServer(t)
	csv := file(t, "list.csv", "phone_number\n+14155550101\n")
	s.voiceapi(s.createArgs(csv, "--name", "kept")...)
	id := s.campaigns()[0].ID
	s.voiceapi("campaign", "cancel", id, "--yes")
	for _, bad := range []string{"", "x", "cmp_", "cmp_01JD6X0000000000000000000", ".", "..", "../" + id, "x/../" + id, id + "/", id + "x", "%2e%2e",
		strings.Repeat("c", 300)} {
		want := "404 not_found"
		if bad == "" {
			want = "needs a non-empty campaign_id" // the client's, before any request
		}
		if got := s.refused("campaign", "delete", bad, "--yes"); !strings.Contains(got, want) {
			t.Errorf("delete %q: %s, want %q", bad, got, want)
		}
		if got := s.status(id); got != data.CampaignCanceled {
			t.Fatalf("after delete %q the campaign is %q", bad, got)
		}
	}
}
