package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/postgres"
)

// runCLI runs the command line with args and returns its output and error.
func runCLI(args ...string) (string, error) {
	var out bytes.Buffer
	root := NewRootCommand(&out, &out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// migrate applies every embedded migration once, reports them, then finds nothing to do.
func TestMigrateCommand(t *testing.T) {
	url := pgtest.Database(t)
	all, err := postgres.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	out, err := runCLI("migrate", "--database-url", url, "--status")
	if err != nil || !strings.Contains(out, "schema version 0") {
		t.Fatalf("status of an empty database: %v\n%s", err, out)
	}
	out, err = runCLI("migrate", "--database-url", url)
	if err != nil || strings.Count(out, "applied ") != len(all) {
		t.Fatalf("first migrate: %v\n%s", err, out)
	}
	out, err = runCLI("migrate", "--database-url", url)
	if err != nil || !strings.Contains(out, "already at version") {
		t.Fatalf("second migrate: %v\n%s", err, out)
	}
	if _, err := runCLI("migrate"); err == nil || !strings.Contains(err.Error(), "--database-url") {
		t.Fatalf("migrate without a URL: %v", err)
	}
}

// The commands that work on the bbolt file refuse a PostgreSQL location and say what to
// use instead, rather than half-working.
func TestBoltOnlyCommandsRefusePostgres(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"backup", "--out", "x.tar.gz"}, "pg_dump"},
		{[]string{"restore", "--in", "x.tar.gz"}, "pg_restore"},
		{[]string{"check"}, "pg_amcheck"},
		{[]string{"stats"}, "pg_total_relation_size"},
		{[]string{"compact"}, "VACUUM"},
	} {
		_, err := runCLI(append(c.args, "--database-url", "postgres://nowhere.invalid/db")...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error naming %s", c.args, err, c.want)
		}
	}
}

// The admin commands work on PostgreSQL as on a data directory: a user made there can
// get a key, the workspaces list, and the audit chain verifies.
func TestAdminCommandsOnPostgres(t *testing.T) {
	url := pgtest.Database(t)
	dir := t.TempDir() // the key file's home
	at := []string{"--database-url", url, "--data", dir}
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"user", "create", "--email", "ops@example.com", "--name", "Ops", "--password", "long-password-1"}, "created user"},
		{[]string{"key", "create", "--email", "ops@example.com", "--name", "ci"}, "|"},
		{[]string{"workspace", "list"}, "ws_"},
		{[]string{"user", "list"}, "ops@example.com"},
		{[]string{"audit", "verify"}, "every hash chain is intact"},
	}
	for _, s := range steps {
		out, err := runCLI(append(s.args, at...)...)
		if err != nil || !strings.Contains(out, s.want) {
			t.Fatalf("%v: %v\n%s", s.args, err, out)
		}
	}
	// Another secret key than the database's is refused with the reason.
	other := t.TempDir()
	if out, err := runCLI("user", "list", "--database-url", url, "--data", other); err == nil || !strings.Contains(err.Error(), "secret key differs") {
		t.Errorf("a command with another key: %v\n%s", err, out)
	}
}
