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

// TestFlagValueErrors: a flag's value that does not parse is named with the flag and what
// it wants, without the parser's Go error, from the command line and from VOICEAPI_*.
func TestFlagValueErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"chat", "A", "--version", "two"}, `invalid value "two" for --version: want a whole number`},
		{[]string{"chat", "A", "--version", "99999999999999999999"}, `invalid value "99999999999999999999" for --version: want a whole number, and this one is out of range`},
		{[]string{"test", "A", "--poll", "5"}, `invalid value "5" for --poll: want a duration with its unit, such as 500ms, 30s, 10m or 1h30m`},
		{[]string{"campaign", "show", "cmp_1", "--watch=maybe"}, `invalid value "maybe" for --watch: want true or false`},
		{[]string{"campaign", "create", "--max-concurrent", "1.5"}, `invalid value "1.5" for --max-concurrent: want a whole number`},
		{[]string{"serve", "--db-pool-size", "many"}, `invalid value "many" for --db-pool-size: want a whole number`},
		{[]string{"serve", "--webhook-retry-schedule", "5s,later"}, `invalid value "5s,later" for --webhook-retry-schedule: want durations with their units, comma-separated, such as 5s,30s,2m`},
	} {
		_, _, err := run(t, "", c.args...)
		if err == nil || err.Error() != c.want || ExitCode(err) != 1 {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	t.Setenv("VOICEAPI_TIMEOUT", "soon")
	_, _, err := run(t, "", "calls", "analyze", "call_1")
	if want := `VOICEAPI_TIMEOUT: invalid value "soon" for --timeout: want a duration with its unit, such as 500ms, 30s, 10m or 1h30m`; err == nil || err.Error() != want {
		t.Errorf("from the environment: %v, want %q", err, want)
	}
}

// TestFlagsGivenTogether: two flags that exclude each other are refused in the command
// line's terms, not cobra's ("if any flags in the group [password password-stdin] are set
// none of the others can be; [password password-stdin] were all set"). A variable does not
// count: VOICEAPI_PASSWORD left in the environment does not refuse --password-stdin.
func TestFlagsGivenTogether(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"user", "create", "--email", "a@example.com", "--name", "A", "--password", "password123", "--password-stdin"}, "--password and --password-stdin cannot be given together: give one of them"},
		{[]string{"chat", "A", "--draft", "--version", "2"}, "--draft and --version cannot be given together: give one of them"},
		{[]string{"campaign", "create", "--file", "c.json", "--window", "mon 09:00-17:00"}, "--file and --window cannot be given together: give one of them"},
	} {
		_, _, err := run(t, "", c.args...)
		if err == nil || err.Error() != c.want || ExitCode(err) != 1 {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	t.Setenv("VOICEAPI_PASSWORD", "from-the-environment")
	dir := t.TempDir()
	if _, _, err := run(t, "new-password1\n", "user", "create", "--data", dir, "--email", "b@example.com", "--name", "B", "--password-stdin"); err != nil {
		t.Errorf("--password-stdin with VOICEAPI_PASSWORD set: %v", err)
	}
}
