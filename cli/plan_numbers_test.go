package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
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

// TestYAMLNumbersThroughApplyPlanPull: a YAML state file's numbers reach the server as
// written (the former reader, through a float64, sent 123456789012345678901234567890 as
// 123456789012345680000000000000 and 0.1000000000000000055511151231257827 as 0.1), plan
// then finds nothing to do, and what pull writes applies back unchanged.
func TestYAMLNumbersThroughApplyPlanPull(t *testing.T) {
	s := newIACServer(t)
	dir := writeFiles(t, map[string]string{"agents.yaml": "agents:\n  - name: Numbers\n    prompt_config:\n      prompt: Order {{ref}}\n" +
		"      default_variables: {ref: 123456789012345678901234567890, rate: 0.1000000000000000055511151231257827, mask: 0x1F, seats: 2.50}\n"})
	want := map[string]any{"ref": json.Number("123456789012345678901234567890"), "rate": json.Number("0.1000000000000000055511151231257827"),
		"mask": json.Number("31"), "seats": json.Number("2.50")}
	held := func(when string) {
		t.Helper()
		agents, err := client.Collect(s.c.Agents.All(context.Background(), client.AgentFilter{}))
		if err != nil || len(agents) != 1 {
			t.Fatalf("%s: %d agents: %v", when, len(agents), err)
		}
		if got := agents[0].PromptConfig.DefaultVariables; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the server holds %#v", when, got)
		}
	}
	// The server holds the numbers exactly (a JSON file keeps them): the YAML file that
	// writes the same is no change.
	exact := writeFiles(t, map[string]string{"agents.json": `{"agents":[{"name":"Numbers","prompt_config":{"prompt":"Order {{ref}}",` +
		`"default_variables":{"ref":123456789012345678901234567890,"rate":0.1000000000000000055511151231257827,"mask":31,"seats":2.50}}}]}`})
	if out, err := s.cmd(t, "apply", "-f", exact); err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	if out, err := s.cmd(t, "plan", "-f", dir); ExitCode(err) != 0 {
		t.Fatalf("plan of the YAML file writing the server's numbers: exit %d\n%s", ExitCode(err), out)
	}
	agents, err := client.Collect(s.c.Agents.All(context.Background(), client.AgentFilter{}))
	if err != nil || len(agents) != 1 {
		t.Fatalf("%d agents: %v", len(agents), err)
	}
	if err := s.c.Agents.Delete(context.Background(), agents[0].ID); err != nil {
		t.Fatal(err)
	}
	if out, err := s.cmd(t, "apply", "-f", dir); err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	held("after apply")
	if out, err := s.cmd(t, "plan", "-f", dir); ExitCode(err) != 0 {
		t.Fatalf("plan right after apply: exit %d\n%s", ExitCode(err), out)
	}
	pulled := t.TempDir()
	if out, err := s.cmd(t, "pull", "-o", pulled); err != nil {
		t.Fatalf("pull: %v\n%s", err, out)
	}
	y, _ := os.ReadFile(filepath.Join(pulled, PullFile))
	for _, n := range []string{"ref: 123456789012345678901234567890\n", "rate: 0.1000000000000000055511151231257827\n", "seats: 2.50\n"} {
		if !strings.Contains(string(y), n) {
			t.Errorf("pull wrote no %q:\n%s", n, y)
		}
	}
	if out, err := s.cmd(t, "plan", "-f", pulled); ExitCode(err) != 0 {
		t.Fatalf("plan of what pull wrote: exit %d\n%s", ExitCode(err), out)
	}
	if out, err := s.cmd(t, "apply", "-f", pulled); err != nil {
		t.Fatalf("apply of what pull wrote: %v\n%s", err, out)
	}
	held("after apply of what pull wrote")
}
