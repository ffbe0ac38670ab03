package cli

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// consentNames are the flags that consent to what cannot be undone or grant more than
// the default; every command that has one must mark it, or its environment variable
// would give the consent silently.
var consentNames = map[string]bool{"yes": true, "force": true, "prune": true, "include-secrets": true, "admin": true}

// TestConsentFlagsAreMarked walks the whole command tree: a flag named like a consent is
// marked as one, and bindEnv leaves it unset even when its variable says true, while an
// ordinary flag of the same command still reads its variable.
func TestConsentFlagsAreMarked(t *testing.T) {
	for name := range consentNames {
		t.Setenv(envName(name), "true")
	}
	seen := 0
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if !consentNames[f.Name] {
				return
			}
			seen++
			if _, ok := f.Annotations[consentAnnotation]; !ok {
				t.Errorf("%s --%s is not marked as a consent", cmd.CommandPath(), f.Name)
			}
		})
		if err := bindEnv(cmd.Flags()); err != nil {
			t.Fatalf("%s: %v", cmd.CommandPath(), err)
		}
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if consentNames[f.Name] && f.Value.String() != "false" {
				t.Errorf("%s --%s was set from %s", cmd.CommandPath(), f.Name, envName(f.Name))
			}
		})
	}
	walk(NewRootCommand(io.Discard, io.Discard))
	// backup, restore, calls export, pull, workspace export, campaign cancel, plan, apply,
	// user create: fewer means the walk missed commands.
	if seen < 9 {
		t.Errorf("saw %d consent flags, want at least 9", seen)
	}

	t.Setenv("VOICEAPI_DATA", "/from/the/environment")
	cmd := NewBackupCommand()
	if err := bindEnv(cmd.Flags()); err != nil {
		t.Fatal(err)
	}
	if got, _ := cmd.Flags().GetString("data"); got != "/from/the/environment" {
		t.Errorf("--data beside a consent flag: %q, want the environment's value", got)
	}
}

// TestForceFromEnvironmentDoesNotRestoreOverData: VOICEAPI_FORCE=true in the environment
// does not let restore replace a non-empty data directory; --force on the command line does.
func TestForceFromEnvironmentDoesNotRestoreOverData(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := run(t, "", "user", "create", "--data", dir, "--email", "a@example.com", "--name", "A", "--password", "password123"); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "b.tar.gz")
	if out, err := runCombined(t, "backup", "--data", dir, "--out", archive); err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	t.Setenv("VOICEAPI_FORCE", "true")
	if out, err := runCombined(t, "restore", "--data", dir, "--in", archive); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("restore over data with VOICEAPI_FORCE=true: %v\n%s", err, out)
	}
	if out, err := runCombined(t, "restore", "--data", dir, "--in", archive, "--force"); err != nil {
		t.Fatalf("restore with --force: %v\n%s", err, out)
	}
}
