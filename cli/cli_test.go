package cli

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
)

// run executes the command line on a fresh root and returns stdout, stderr and the error.
func run(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := NewRootCommand(&out, &errOut)
	root.SetArgs(args)
	root.SetIn(strings.NewReader(stdin))
	err := root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

func TestUserCreateAndList(t *testing.T) {
	dir := t.TempDir()
	out, _, err := run(t, "", "user", "create", "--data", dir, "--email", "Ada@Example.com", "--name", "Ada", "--password", "correct-horse", "--admin")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "ada@example.com") || !strings.Contains(out, "usr_") || !strings.Contains(out, "ws_") {
		t.Errorf("create output %q", out)
	}
	if _, _, err := run(t, "s3cret-from-stdin\n", "user", "create", "--data", dir, "--email", "bea@example.com", "--name", "Bea", "--password-stdin"); err != nil {
		t.Fatal(err)
	}

	// Validation: every fault named; duplicates refused; --password and --password-stdin exclusive.
	_, errOut, err := run(t, "", "user", "create", "--data", dir, "--email", "not-an-email", "--name", "", "--password", "short")
	if err == nil || !strings.Contains(err.Error(), "email") || !strings.Contains(err.Error(), "password") || !strings.Contains(err.Error(), "name") {
		t.Errorf("validation: %v", err)
	}
	if !strings.Contains(errOut, "invalid input") {
		t.Errorf("stderr %q", errOut)
	}
	if _, _, err := run(t, "", "user", "create", "--data", dir, "--email", "ada@example.com", "--name", "Ada", "--password", "correct-horse"); err == nil || !strings.Contains(err.Error(), "taken") {
		t.Errorf("duplicate: %v", err)
	}
	if _, _, err := run(t, "x\n", "user", "create", "--data", dir, "--email", "c@example.com", "--name", "C", "--password", "12345678", "--password-stdin"); err == nil {
		t.Error("--password with --password-stdin accepted")
	}

	out, _, err = run(t, "", "user", "list", "--data", dir)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "EMAIL") || !strings.Contains(lines[1], "bea@example.com") || !strings.Contains(lines[2], "ada@example.com") || !strings.Contains(lines[2], "true") {
		t.Errorf("list:\n%s", out)
	}

	// The stdin password is the one stored.
	db := openDir(t, dir)
	defer db.Close()
	if _, _, err := NewServices(db).Auth.Login(context.Background(), "bea@example.com", "s3cret-from-stdin", nil); err != nil {
		t.Errorf("login with the stdin password: %v", err)
	}
}

func openDir(t *testing.T, dir string) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestKeyCreateAndWorkspaceList(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := run(t, "", "user", "create", "--data", dir, "--email", "kai@example.com", "--name", "Kai", "--password", "password-kai"); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := run(t, "", "key", "create", "--data", dir, "--email", "KAI@example.com", "--name", "deploy")
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(out)
	if !strings.Contains(token, "|") || strings.Contains(token, "\n") || !strings.Contains(errOut, "shown once") {
		t.Errorf("stdout %q stderr %q", out, errOut)
	}
	if _, _, err := run(t, "", "key", "create", "--data", dir, "--email", "nobody@example.com"); err == nil {
		t.Error("key for an unknown user")
	}
	if _, _, err := run(t, "", "key", "create", "--data", dir, "--email", "kai@example.com", "--expiration", "2001-01-01"); err == nil || !strings.Contains(err.Error(), "expiration") {
		t.Errorf("past expiration: %v", err)
	}
	if _, _, err := run(t, "", "key", "create", "--data", dir, "--email", "kai@example.com", "--workspace", "ws_01JD6000000000000000000000"); err == nil {
		t.Error("key in a foreign workspace")
	}

	out, _, err = run(t, "", "workspace", "list", "--data", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Kai's workspace") || !strings.Contains(out, "ws_") {
		t.Errorf("workspace list:\n%s", out)
	}

	db := openDir(t, dir)
	defer db.Close()
	p, err := NewServices(db).Auth.Authenticate(context.Background(), token)
	if err != nil {
		t.Fatalf("the printed token does not authenticate: %v", err)
	}
	u, _ := NewServices(db).Users.UserByEmail(context.Background(), "kai@example.com")
	if p.UserID != u.ID || p.WorkspaceID != u.PersonalWorkspaceID || p.Role != "owner" {
		t.Errorf("principal %+v", p)
	}
}

// TestKeyCreateLimits: --scope and --agent make a limited key as POST /api/v1/api-keys
// does, with the API's faults for a scope or agent it refuses (and no key made then).
func TestKeyCreateLimits(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := run(t, "", "user", "create", "--data", dir, "--email", "kai@example.com", "--name", "Kai", "--password", "password-kai"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args  []string
		fault string
	}{
		{[]string{"--scope", "calls:runtim"}, `scopes.0: The selected scopes.0 is invalid`},
		{[]string{"--scope", "calls:runtime", "--scope", "calls:runtime"}, `scopes.1: The scopes.1 field has a duplicate value`},
		{[]string{"--agent", "agt_01JD6ZZZZZZZZZZZZZZZZZZZZZ"}, `agent_ids.0: The agent_ids.0 field`},
	} {
		args := append([]string{"key", "create", "--data", dir, "--email", "kai@example.com"}, c.args...)
		if _, _, err := run(t, "", args...); err == nil || !strings.Contains(err.Error(), c.fault) {
			t.Errorf("%v: %v, want a fault on %s", c.args, err, c.fault)
		}
	}
	out, _, err := run(t, "", "key", "create", "--data", dir, "--email", "kai@example.com", "--name", "runtime", "--scope", "calls:runtime")
	if err != nil {
		t.Fatal(err)
	}
	db := openDir(t, dir)
	defer db.Close()
	p, err := NewServices(db).Auth.Authenticate(context.Background(), strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("the printed token does not authenticate: %v", err)
	}
	if strings.Join(p.Scopes, ",") != "calls:runtime" {
		t.Errorf("scopes %v, want [calls:runtime]", p.Scopes)
	}
	keys, _, err := NewServices(db).Auth.ListAPIKeys(data.WithPrincipal(context.Background(), p), data.PageRequest{})
	if err != nil || len(keys) != 1 {
		t.Errorf("keys %v, %v: want only the one key (a refused create makes none)", keys, err)
	}
}

func TestEnvironmentBinding(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("VOICEAPI_DATA", dir)
	t.Setenv("VOICEAPI_EMAIL", "env@example.com")
	t.Setenv("VOICEAPI_NAME", "Env")
	t.Setenv("VOICEAPI_PASSWORD", "password-env")
	if _, _, err := run(t, "", "user", "create"); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "", "user", "list")
	if err != nil || !strings.Contains(out, "env@example.com") {
		t.Errorf("list with VOICEAPI_DATA: %v\n%s", err, out)
	}
	// A flag on the command line wins over the environment.
	other := t.TempDir()
	if _, _, err := run(t, "", "user", "create", "--data", other, "--email", "flag@example.com"); err != nil {
		t.Fatal(err)
	}
	out, _, _ = run(t, "", "user", "list", "--data", other)
	if !strings.Contains(out, "flag@example.com") || strings.Contains(out, "env@example.com") {
		t.Errorf("flag did not win:\n%s", out)
	}
	// A bad value names the variable.
	t.Setenv("VOICEAPI_LOGIN_TTL", "forever")
	_, _, err = run(t, "", "serve", "--addr", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), "VOICEAPI_LOGIN_TTL") {
		t.Errorf("bad VOICEAPI_LOGIN_TTL: %v", err)
	}
}

func TestLockedDatabaseFailsFast(t *testing.T) {
	dir := t.TempDir()
	held := openDir(t, dir)
	defer held.Close()
	for _, args := range [][]string{
		{"user", "list", "--data", dir},
		{"user", "create", "--data", dir, "--email", "x@example.com", "--name", "X", "--password", "password-x"},
	} {
		start := time.Now()
		_, _, err := run(t, "", args...)
		elapsed := time.Since(start)
		if err == nil {
			t.Fatalf("%v succeeded on a held database", args)
		}
		if elapsed > 5*time.Second {
			t.Errorf("%v took %v", args, elapsed)
		}
		msg := err.Error()
		if !strings.Contains(msg, "in use") || !strings.Contains(msg, "stop the server") || !strings.Contains(msg, "HTTP API") {
			t.Errorf("%v: unclear message %q", args, msg)
		}
	}
}

func TestServeFlagsAndMissingDataDir(t *testing.T) {
	cmd := NewServeCommand()
	for flag, def := range map[string]string{"addr": "127.0.0.1:8080", "data": "./voiceapi-data", "login-ttl": "720h0m0s", "drain-timeout": "20s", "log-level": "info"} {
		f := cmd.Flags().Lookup(flag)
		if f == nil || f.DefValue != def {
			t.Errorf("--%s: %v", flag, f)
		}
	}
	if _, _, err := run(t, "", "user", "list", "--data", t.TempDir()+"/missing"); err == nil {
		t.Error("user list on a missing directory")
	}
}

func TestBootstrapOnce(t *testing.T) {
	db, err := bolt.Open(t.TempDir(), bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var out bytes.Buffer
	if err := bootstrap(ctx, db, &out); err != nil {
		t.Fatal(err)
	}
	fields := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			fields[k] = strings.TrimSpace(v)
		}
	}
	if fields["email"] == "" || len(fields["password"]) < 16 || fields["api token"] == "" {
		t.Fatalf("bootstrap output:\n%s", out.String())
	}
	if _, _, err := NewServices(db).Auth.Login(ctx, fields["email"], fields["password"], nil); err != nil {
		t.Errorf("printed credentials do not log in: %v", err)
	}
	p, err := NewServices(db).Auth.Authenticate(ctx, fields["api token"])
	if err != nil || !p.IsAdmin || p.Role != "owner" {
		t.Errorf("printed token: %+v %v", p, err)
	}
	out.Reset()
	if err := bootstrap(ctx, db, &out); err != nil || out.Len() != 0 {
		t.Errorf("second bootstrap printed %q (%v)", out.String(), err)
	}
}

func TestRunServeStopsOnCancel(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncWriter
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, testServeOptions(t, dir, "--drain-timeout", "1s"), &out, &errOut)
	}()
	// Generous: the first start hashes the owner's password at bcrypt cost 12, which takes
	// seconds under -race on a busy machine.
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(errOut.String(), "listening") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(out.String(), "api token:") {
		t.Errorf("no bootstrap output: %q", out.String())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("runServe: %v", err)
		}
	case <-time.After(30 * time.Second): // a hang guard; the drain is 1 s
		t.Fatal("runServe did not stop")
	}
	if _, _, err := run(t, "", "user", "list", "--data", dir); err != nil {
		t.Errorf("the database was not closed: %v", err)
	}
}

func TestServePurgesExpiredIdempotentResponses(t *testing.T) {
	now := time.Now()
	db, err := bolt.Open(t.TempDir(), bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true, SecretKey: make([]byte, 32), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithCancel(context.Background())
	if err := NewServices(db).Idempotency.SaveIdempotentResponse(ctx, 1, "k", &data.IdempotentResponse{Status: 201}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(25 * time.Hour)
	cancel() // one pass, then return
	purgeIdempotency(ctx, db, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Hour)
	n := -1
	db.Bolt().View(func(tx *bbolt.Tx) error { n = tx.Bucket([]byte("idempotency")).Stats().KeyN; return nil })
	if n != 0 {
		t.Errorf("%d expired responses left after a purge pass", n)
	}
}

// A flag value serve cannot honour is refused before anything starts, not silently
// replaced by a default.
func TestServeRefusesBadFlagValues(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--webhook-workers", "0"},
		{"--rate-limit", "-1"},
		{"--login-rate-limit", "-5"},
	} {
		_, _, err := run(t, "", append([]string{"serve", "--data", dir, "--addr", "127.0.0.1:0"}, args...)...)
		if err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("%v: error %v, want one naming %s", args, err, args[0])
		}
	}
}
