package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/client"
)

// TestPlanComparesNumbersExactly: plan compares numbers as exact decimals. Editing a
// default variable 12345678901234567890 to …891 is a change that apply makes; 2 written
// 2.0 is none. Both a YAML and a JSON state file (read as JSON, so a decimal past
// float64's precision keeps its text too).
func TestPlanComparesNumbersExactly(t *testing.T) {
	for _, c := range []struct{ file, before, after, same string }{
		{"agents.yaml",
			"agents:\n  - name: Numbers\n    prompt_config:\n      prompt: Order {{ref}}\n      default_variables: {ref: 12345678901234567890, seats: 2}\n",
			"agents:\n  - name: Numbers\n    prompt_config:\n      prompt: Order {{ref}}\n      default_variables: {ref: 12345678901234567891, seats: 2}\n",
			"agents:\n  - name: Numbers\n    prompt_config:\n      prompt: Order {{ref}}\n      default_variables: {ref: 12345678901234567891, seats: 2.0}\n"},
		{"agents.json",
			`{"agents":[{"name":"Numbers","prompt_config":{"prompt":"Order {{ref}}","default_variables":{"ref":12345678901234567890,"rate":0.1000000000000000055511151231257827,"seats":2}}}]}`,
			`{"agents":[{"name":"Numbers","prompt_config":{"prompt":"Order {{ref}}","default_variables":{"ref":12345678901234567891,"rate":0.1000000000000000055511151231257827,"seats":2}}}]}`,
			`{"agents":[{"name":"Numbers","prompt_config":{"prompt":"Order {{ref}}","default_variables":{"ref":12345678901234567891,"rate":0.10000000000000000555111512312578270,"seats":2.0e0}}}]}`},
	} {
		t.Run(c.file, func(t *testing.T) {
			s := newIACServer(t)
			dir := writeFiles(t, map[string]string{c.file: c.before})
			if out, err := s.cmd(t, "apply", "-f", dir); err != nil {
				t.Fatalf("apply: %v\n%s", err, out)
			}
			if out, err := s.cmd(t, "plan", "-f", dir); ExitCode(err) != 0 {
				t.Fatalf("plan right after apply: exit %d\n%s", ExitCode(err), out)
			}
			writeFiles2(t, dir, c.file, c.after)
			out, err := s.cmd(t, "plan", "-f", dir)
			if ExitCode(err) != 2 || !strings.Contains(out, "~ prompt_config.default_variables:") ||
				!strings.Contains(out, `"ref":12345678901234567890`) || !strings.Contains(out, `"ref":12345678901234567891`) {
				t.Fatalf("plan after …890 → …891: exit %d\n%s", ExitCode(err), out)
			}
			if out, err := s.cmd(t, "apply", "-f", dir); err != nil {
				t.Fatalf("apply: %v\n%s", err, out)
			}
			agents, err := client.Collect(s.c.Agents.All(context.Background(), client.AgentFilter{}))
			if err != nil || len(agents) != 1 {
				t.Fatalf("%d agents: %v", len(agents), err)
			}
			if ref := agents[0].PromptConfig.DefaultVariables["ref"]; ref != json.Number("12345678901234567891") {
				t.Errorf("the server holds ref %#v after apply", ref)
			}
			writeFiles2(t, dir, c.file, c.same)
			if out, err := s.cmd(t, "plan", "-f", dir); ExitCode(err) != 0 {
				t.Errorf("plan with the same numbers written otherwise: exit %d\n%s", ExitCode(err), out)
			}
		})
	}
}
