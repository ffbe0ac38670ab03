package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/client"
)

const iacAnalysisAgent = `agents:
  - name: Bookings
    analysis_config:
      fields:
        - {name: outcome, type: enum, description: How the call ended, choices: [booked, declined], required: true}
        - {name: party_size, type: number, description: Guests}
      success_criterion: A table was booked.
      summary: true
      auto: true
`

// TestAnalysisConfigAsCode: analysis_config is managed like any group: applied, planned
// member by member, pulled and planned again as no change.
func TestAnalysisConfigAsCode(t *testing.T) {
	s := newIACServer(t)
	ctx := context.Background()
	dir := writeFiles(t, map[string]string{"agents.yaml": iacAnalysisAgent})
	if out, err := s.cmd(t, "apply", "-f", dir); err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	agents, _ := client.Collect(s.c.Agents.All(ctx, client.AgentFilter{}))
	if len(agents) != 1 {
		t.Fatalf("%d agents", len(agents))
	}
	got := agents[0].AnalysisConfig
	if len(got.Fields) != 2 || got.Fields[0].Choices[1] != "declined" || !got.Fields[0].Required || !got.Auto || !got.Summary || *got.SuccessCriterion != "A table was booked." {
		t.Fatalf("applied analysis_config = %+v", got)
	}
	if out, err := s.cmd(t, "plan", "-f", dir); ExitCode(err) != 0 {
		t.Fatalf("plan after apply: exit %d\n%s", ExitCode(err), out)
	}
	writeFiles2(t, dir, "agents.yaml", strings.Replace(iacAnalysisAgent, "auto: true", "auto: false", 1))
	out, err := s.cmd(t, "plan", "-f", dir)
	if ExitCode(err) != 2 || !strings.Contains(out, "~ analysis_config.auto: true → false") || strings.Contains(out, "analysis_config.fields") {
		t.Fatalf("plan after an edit: exit %d\n%s", ExitCode(err), out)
	}
	if out, err := s.cmd(t, "apply", "-f", dir); err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}

	pulled := t.TempDir()
	if out, err := s.cmd(t, "pull", "-o", pulled); err != nil {
		t.Fatalf("pull: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(filepath.Join(pulled, PullFile))
	if err != nil || !strings.Contains(string(raw), "analysis_config") || !strings.Contains(string(raw), "party_size") {
		t.Fatalf("pulled file lacks analysis_config (%v):\n%s", err, raw)
	}
	if out, err := s.cmd(t, "plan", "-f", pulled); ExitCode(err) != 0 {
		t.Fatalf("plan after pull: exit %d\n%s", ExitCode(err), out)
	}
}
