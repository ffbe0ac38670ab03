package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAdminCommandsNameMissingFlags: an admin command missing what it needs says which
// flag supplies it, instead of a rule about the empty value it went on with.
func TestAdminCommandsNameMissingFlags(t *testing.T) {
	dir, u := stoppedDataDir(t)
	missingDir := filepath.Join(t.TempDir(), "missing")
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		want  []string // every one must be in the error
		not   []string // none may be
	}{
		{"user create without a password", "", []string{"user", "create", "--data", dir, "--email", "b@example.com", "--name", "B"},
			[]string{"--password", "--password-stdin"}, []string{"at least 8", "--email", "--name"}},
		{"user create without anything", "", []string{"user", "create", "--data", dir},
			[]string{"--email", "--name", "--password", "--password-stdin"}, []string{"at least 8"}},
		{"user create without --name", "", []string{"user", "create", "--data", dir, "--email", "b@example.com", "--password", "password-b"},
			[]string{"--name"}, []string{"--email", "password"}},
		{"user create --password-stdin with nothing on stdin", "", []string{"user", "create", "--data", dir, "--email", "b@example.com", "--name", "B", "--password-stdin"},
			[]string{"--password-stdin", "empty password"}, []string{"at least 8"}},
		{"user create on a missing data directory", "", []string{"user", "create", "--data", missingDir, "--email", "b@example.com", "--name", "B", "--password", "password-b"},
			[]string{missingDir, "does not exist", "--data", "VOICEAPI_DATA", "serve"}, nil},
		{"user list on a missing data directory", "", []string{"user", "list", "--data", missingDir},
			[]string{"does not exist", "--data"}, nil},
		{"key create without --email", "", []string{"key", "create", "--data", dir}, []string{`"email"`}, nil},
		{"backup without --out", "", []string{"backup", "--data", dir}, []string{`"out"`}, nil},
		{"restore without --in", "", []string{"restore", "--data", dir}, []string{`"in"`}, nil},
		{"workspace import without --in", "", []string{"workspace", "import", "--data", dir, "--workspace", u.PersonalWorkspaceID}, []string{`"in"`}, nil},
		{"subscription set without --workspace", "", []string{"subscription", "set", "--data", dir}, []string{`"workspace"`}, nil},
		{"audit verify of an unknown workspace", "", []string{"audit", "verify", "--data", dir, "--workspace", "ws_01JD6000000000000000000000"},
			[]string{"--workspace", "ws_01JD6000000000000000000000", "no such workspace"}, []string{"ok:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := run(t, tc.stdin, tc.args...)
			if err == nil {
				t.Fatalf("succeeded:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(err.Error(), n) {
					t.Errorf("error %q names %q", err, n)
				}
			}
			if strings.Contains(out, "ok:") {
				t.Errorf("stdout %q, stderr %q", out, errOut)
			}
		})
	}
	// Nothing was created by the refused commands.
	out, _, err := run(t, "", "user", "list", "--data", dir)
	if err != nil || strings.Count(strings.TrimSpace(out), "\n") != 1 {
		t.Errorf("users after the refusals:\n%s (%v)", out, err)
	}
	if _, err := os.Stat(missingDir); err == nil {
		t.Error("a refused command created the missing data directory")
	}
	// The password from the environment counts as given.
	t.Setenv("VOICEAPI_PASSWORD", "password-from-env")
	if _, _, err := run(t, "", "user", "create", "--data", dir, "--email", "env@example.com", "--name", "Env"); err != nil {
		t.Errorf("user create with VOICEAPI_PASSWORD: %v", err)
	}
}
