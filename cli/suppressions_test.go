package cli_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
)

// suppressions reads the suppression list through the API.
func (s *campaignServer) suppressions() []*data.Suppression {
	s.t.Helper()
	list, err := client.Collect(s.owner.Campaigns.AllSuppressions(context.Background()))
	if err != nil {
		s.t.Fatal(err)
	}
	return list
}

// TestSuppressionsCommands: add (twice: one entry), list as a table and as JSON, import
// a CSV (a bad line named, nothing added), remove; a campaign skips a listed number; a
// key limited to one agent may add but not remove; an unknown entry is a 404 message.
func TestSuppressionsCommands(t *testing.T) {
	s := newCampaignServer(t)
	out := s.voiceapi("suppressions", "add", "+14155550101", "--reason", "asked not to be called")
	list := s.suppressions()
	if len(list) != 1 || deref(list[0].Reason) != "asked not to be called" || out != "+14155550101 is on the suppression list ("+list[0].ID+").\n" {
		t.Fatalf("add: %q, list %+v", out, list)
	}
	if again := s.voiceapi("suppressions", "add", "+14155550101"); again != out || len(s.suppressions()) != 1 {
		t.Errorf("adding a listed number again: %q", again)
	}
	if got := s.refused("suppressions", "add", "call me maybe"); !strings.Contains(got, "\n  phone_number: ") {
		t.Errorf("add of a bad number: %s", got)
	}

	bad := file(t, "bad.csv", "phone_number,reason\n+14155550102,moved\nnope,\n")
	if got := s.refused("suppressions", "import", bad); !strings.Contains(got, "\n  rows.line_3.phone_number: ") || len(s.suppressions()) != 1 {
		t.Errorf("import with a bad line 3: %s (%d listed)", got, len(s.suppressions()))
	}
	good := file(t, "good.csv", "phone_number,reason\n+14155550102,moved\n+14155550101,\n")
	if out := s.voiceapi("suppressions", "import", good); out != "Imported 2 rows: 1 added, 1 listed already.\n" {
		t.Errorf("import: %q", out)
	}
	out = s.voiceapi("suppressions", "list")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 3 || !strings.Contains(lines[1], "+14155550102") ||
		!strings.Contains(lines[1], "moved") || !strings.Contains(lines[2], "asked not to be called") {
		t.Errorf("list:\n%s", out)
	}
	out = s.voiceapi("suppressions", "list", "--json")
	var first data.Suppression
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &first); err != nil || first.PhoneNumber != "+14155550102" || strings.Count(out, "\n") != 2 {
		t.Errorf("list --json: %v %q", err, out)
	}

	out = s.voiceapi(s.createArgs(file(t, "list.csv", "phone_number\n+14155550101\n+14155550103\n"))...)
	if !strings.Contains(out, "1 recipient from 2 rows, 0 duplicates merged, 1 on the suppression list skipped.") {
		t.Errorf("a campaign with a listed number: %q", out)
	}
	// show's lines add up: the skipped number is counted suppressed, not in the total.
	camp := strings.Fields(out)[2]
	if show := s.voiceapi("campaign", "show", camp); !strings.Contains(show, "suppressed   1 (1 skipped at import, not in the total)") || !strings.Contains(show, "total        1") {
		t.Errorf("show of a campaign with a listed number:\n%s", show)
	}

	limited := s.key(map[string]any{"name": "one agent", "agent_ids": []string{s.agent}})
	id := s.suppressions()[0].ID
	r := s.run(context.Background(), limited, nil, nil, "suppressions", "remove", id)
	if r.err == nil || !strings.Contains(r.err.Error(), "403 forbidden") || len(s.suppressions()) != 2 {
		t.Errorf("remove with a key limited to one agent: %v", r.err)
	}
	if r := s.run(context.Background(), limited, nil, nil, "suppressions", "add", "+14155550104"); r.err != nil {
		t.Errorf("add with a key limited to one agent: %v", r.err)
	}
	if out := s.voiceapi("suppressions", "remove", id); out != "Removed "+id+" from the suppression list.\n" || len(s.suppressions()) != 2 {
		t.Errorf("remove: %q", out)
	}
	if got := s.refused("suppressions", "remove", id); !strings.Contains(got, "404 not_found") {
		t.Errorf("removing it again: %s", got)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
