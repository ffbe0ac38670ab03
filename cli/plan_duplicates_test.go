package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/client"
)

// TestPlanNamesBothDeclarationsOfOneName: a name declared twice is refused naming both
// entries, file and place, so that two in one file are told apart (the message said
// "in a.yaml and in a.yaml"); nothing is applied.
func TestPlanNamesBothDeclarationsOfOneName(t *testing.T) {
	s := newIACServer(t)
	number := "  - phone_number: \"+14155550100\"\n    provider: sip\n"
	dir := writeFiles(t, map[string]string{
		"a.yaml": "agents:\n  - name: Support\n  - name: Sales\n  - name: Support\nnumbers:\n" + number,
		"b.yaml": "numbers:\n  - phone_number: \"+14155550101\"\n    provider: sip\n" + number,
	})
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	refused := func(want string) {
		t.Helper()
		_, err := s.cmd(t, "apply", "-f", dir)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("apply: %v, want the message %q", err, want)
		}
	}
	refused(`agent "Support" is declared twice: in ` + a + ` (agents[0]) and in ` + a + ` (agents[2])`)
	writeFiles2(t, dir, "a.yaml", "agents:\n  - name: Support\nnumbers:\n"+number)
	refused(`number "+14155550100" is declared twice: in ` + a + ` (numbers[0]) and in ` + b + ` (numbers[1])`)

	agents, err := client.Collect(s.c.Agents.All(context.Background(), client.AgentFilter{}))
	if err != nil || len(agents) != 0 {
		t.Errorf("a refused apply left %d agents (%v)", len(agents), err)
	}
}
