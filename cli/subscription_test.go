package cli_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := cli.NewRootCommand(&out, &errOut)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String() + errOut.String(), err
}

func TestSubscriptionSetCommand(t *testing.T) {
	dir, ws := operatorWorkspace(t)

	out, err := run(t, "subscription", "set", "--data", dir, "--workspace", ws, "--plan", "pro", "--numbers", "5", "--call-minutes", "1000", "--agents", "0")
	if err != nil {
		t.Fatalf("set: %v\n%s", err, out)
	}
	if !strings.Contains(out, `"plan": "pro"`) {
		t.Errorf("output: %s", out)
	}
	// A second set changes only what it names; -1 lifts a limit.
	if out, err := run(t, "subscription", "set", "--data", dir, "--workspace", ws, "--agents", "-1", "--webhooks", "3", "--concurrent-calls", "25"); err != nil {
		t.Fatalf("second set: %v\n%s", err, out)
	}
	db, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := cli.Services(db).Subscriptions.Subscription(context.Background(), ws)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	get := func(name string) int64 {
		if s.Limits[name] == nil {
			return -1
		}
		return *s.Limits[name]
	}
	if s.Plan != "pro" || get(data.LimitNumbers) != 5 || get(data.LimitCallMinutes) != 1000 || get(data.LimitAgents) != -1 ||
		get(data.LimitWebhooks) != 3 || get(data.LimitKnowledgeBases) != -1 || get(data.LimitWorkspaceUsers) != -1 ||
		get(data.LimitConcurrentCalls) != 25 {
		t.Errorf("stored subscription: plan %s, limits %v %v %v %v", s.Plan, get(data.LimitNumbers), get(data.LimitCallMinutes), get(data.LimitAgents), get(data.LimitWebhooks))
	}

	if _, err := run(t, "subscription", "set", "--data", dir, "--workspace", "ws_01JD6ZZZZZZZZZZZZZZZZZZZZZ", "--numbers", "1"); err == nil {
		t.Error("unknown workspace accepted")
	}
	if _, err := run(t, "subscription", "set", "--data", dir, "--workspace", ws, "--numbers", "-5"); err == nil {
		t.Error("a limit of -5 accepted")
	}
	if _, err := run(t, "subscription", "set", "--data", dir, "--numbers", "1"); err == nil {
		t.Error("missing --workspace accepted")
	}
}

// TestSubscriptionSetOpenConversations: --open-conversations sets the plan's
// open_conversations limit, 0 and validate.MaxOpenConversations included; -1 removes it
// (the server's --max-open-conversations bounds again); -2, a word, 1e9 and values past
// the bound are refused and leave the stored limit as it was.
func TestSubscriptionSetOpenConversations(t *testing.T) {
	dir, ws := operatorWorkspace(t)
	// stored reads the plan's open_conversations limit; -1 when the plan sets none (this
	// process runs no server, so no server bound shows either).
	stored := func() int64 {
		t.Helper()
		db, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		s, err := cli.Services(db).Subscriptions.Subscription(context.Background(), ws)
		if err != nil {
			t.Fatal(err)
		}
		if s.Limits[data.LimitOpenConversations] == nil {
			return -1
		}
		return *s.Limits[data.LimitOpenConversations]
	}
	set := func(v string) (string, error) {
		return run(t, "subscription", "set", "--data", dir, "--workspace", ws, "--open-conversations", v)
	}
	for _, c := range []struct {
		value string
		want  int64
	}{
		{"500", 500},
		{"0", 0},
		{strconv.Itoa(validate.MaxOpenConversations), validate.MaxOpenConversations},
		{"-1", -1},
		{"7", 7},
	} {
		if out, err := set(c.value); err != nil {
			t.Fatalf("--open-conversations %s: %v\n%s", c.value, err, out)
		}
		if got := stored(); got != c.want {
			t.Errorf("--open-conversations %s: stored %d, want %d", c.value, got, c.want)
		}
	}
	for _, c := range []struct{ value, says string }{
		{"-2", "open_conversations"},
		{"x", "want a whole number"},
		{"1e9", "want a whole number"},
		{strconv.Itoa(validate.MaxOpenConversations + 1), "open_conversations"},
		{"1000000000", "open_conversations"},
	} {
		out, err := set(c.value)
		if err == nil || !strings.Contains(err.Error()+out, c.says) {
			t.Errorf("--open-conversations %s: %v\n%s, want a refusal saying %q", c.value, err, out, c.says)
		}
		if got := stored(); got != 7 {
			t.Errorf("--open-conversations %s refused, yet the stored limit is now %d, want 7", c.value, got)
		}
	}
}

// operatorWorkspace is a stopped server's data directory holding one user, and that
// user's workspace: what `voiceapi subscription set` works on.
func operatorWorkspace(t *testing.T) (dir, ws string) {
	t.Helper()
	dir = t.TempDir()
	db, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	u, err := cli.NewServices(db).Users.CreateUser(context.Background(), data.UserCreate{Name: "Op", Email: "op@example.com", Password: "password123"})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	return dir, u.PersonalWorkspaceID
}
