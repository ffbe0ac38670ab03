package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/bolt"
)

// TestAdminCommandsLogPlainLines: what the engine logs when an admin command opens the
// database (here a leftover file under files/ swept away) reads as the CLI's other lines,
// on the command's standard error: before, it went through slog's default to the
// process's, as "2026/11/30 23:10:00 INFO removed leftover knowledge base files count=1".
func TestAdminCommandsLogPlainLines(t *testing.T) {
	dir, u := stoppedDataDir(t)
	for _, args := range [][]string{
		{"user", "list", "--data", dir},
		{"user", "create", "--data", dir, "--email", "b@example.com", "--name", "B", "--password", "password123"},
		{"audit", "verify", "--data", dir},
		{"workspace", "list", "--data", dir},
		{"workspace", "export", "--data", dir, "--workspace", u.PersonalWorkspaceID, "--out", filepath.Join(t.TempDir(), "ws.json")},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			leftover := filepath.Join(dir, bolt.FilesDir, "ws_leftover")
			if err := os.MkdirAll(filepath.Dir(leftover), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(leftover, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			out, errOut, err := run(t, "", args...)
			if err != nil {
				t.Fatalf("%v\n%s%s", err, out, errOut)
			}
			if !strings.Contains(errOut, "removed leftover knowledge base files (count=1)\n") {
				t.Errorf("standard error lacks the plain line:\n%q", errOut)
			}
			if regexp.MustCompile(`\d{4}/\d\d/\d\d|INFO|level=`).MatchString(errOut + out) {
				t.Errorf("a log-formatted line:\n%s%s", out, errOut)
			}
			if _, err := os.Stat(leftover); !os.IsNotExist(err) {
				t.Errorf("the leftover file is still there: %v", err)
			}
		})
	}
}

// TestPlainHandlerLines: a warning says so first; attributes, a logger's own included,
// follow the message in one parenthesis, a group's with its name; debug is left out.
func TestPlainHandlerLines(t *testing.T) {
	var b strings.Builder
	log := adminLogger(&b).With("dir", "/d")
	log.Warn("removing a knowledge base file", "error", "busy")
	log.WithGroup("kb").Info("swept", "count", 2)
	log.Debug("not shown")
	want := "warning: removing a knowledge base file (dir=/d, error=busy)\nswept (dir=/d, kb.count=2)\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}
