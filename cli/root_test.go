package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestGroupsRefuseUnknownCommands walks the command tree: every group (calls, campaign,
// jobs, …) refuses a word that is none of its commands with exit status 1, suggesting
// the near one, and without arguments still prints its help and exits 0.
func TestGroupsRefuseUnknownCommands(t *testing.T) {
	var groups []string
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			if sub.HasSubCommands() {
				groups = append(groups, strings.TrimPrefix(sub.CommandPath(), "voiceapi "))
			}
			walk(sub)
		}
	}
	walk(NewRootCommand(io.Discard, io.Discard))
	if len(groups) < 8 {
		t.Fatalf("found the groups %v: the walk missed some", groups)
	}
	for _, g := range groups {
		args := append(strings.Fields(g), "no-such-command")
		out, _, err := run(t, "", args...)
		if err == nil || ExitCode(err) != 1 || !strings.Contains(err.Error(), `unknown command "no-such-command" for "voiceapi `+g+`"`) {
			t.Errorf("voiceapi %s no-such-command: %v (exit %d)\n%s", g, err, ExitCode(err), out)
		}
		out, _, err = run(t, "", strings.Fields(g)...)
		if err != nil || !strings.Contains(out, "Available Commands:") {
			t.Errorf("voiceapi %s: %v\n%s", g, err, out)
		}
	}
	_, _, err := run(t, "", "campaign", "cancle", "cmp_1")
	if err == nil || !strings.Contains(err.Error(), "did you mean cancel?") {
		t.Errorf("campaign cancle: %v", err)
	}
}
