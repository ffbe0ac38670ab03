package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
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

// TestSubscriptionSetShowsOpenConversationsBound: the subscription set prints shows
// open_conversations as the bound in force, as GET /api/v1/subscription does on a server:
// the plan's limit, else the server's --max-open-conversations (its default 100 when not
// given), and says which on stderr; the JSON on stdout stays whole.
func TestSubscriptionSetShowsOpenConversationsBound(t *testing.T) {
	dir, ws := operatorWorkspace(t)
	set := func(args ...string) (bound any, said string) {
		t.Helper()
		var out, errOut bytes.Buffer
		cmd := cli.NewRootCommand(&out, &errOut)
		cmd.SetArgs(append([]string{"subscription", "set", "--data", dir, "--workspace", ws}, args...))
		if err := cmd.Execute(); err != nil {
			t.Fatalf("set %v: %v\n%s%s", args, err, out.String(), errOut.String())
		}
		var sub struct {
			Limits map[string]any `json:"limits"`
		}
		if err := json.Unmarshal(out.Bytes(), &sub); err != nil {
			t.Fatalf("set %v: stdout is not the subscription's JSON: %v\n%s", args, err, out.String())
		}
		return sub.Limits[data.LimitOpenConversations], strings.TrimSpace(errOut.String())
	}
	for _, c := range []struct {
		args []string
		want any
		says string
	}{
		{[]string{"--numbers", "5"}, float64(data.DefaultMaxOpenConversations), "open_conversations: 100 (server default"},
		{[]string{"--max-open-conversations", "40"}, float64(40), "open_conversations: 40 (the plan sets none: the server's --max-open-conversations)"},
		{[]string{"--open-conversations", "500"}, float64(500), "open_conversations: 500 (the plan's limit)"},
		{[]string{"--open-conversations", "0", "--max-open-conversations", "40"}, float64(0), "open_conversations: 0 (the plan's limit)"},
		{[]string{"--open-conversations", "-1", "--max-open-conversations", "0"}, nil, "open_conversations: no bound"},
	} {
		bound, said := set(c.args...)
		if bound != c.want || !strings.HasPrefix(said, c.says) {
			t.Errorf("set %v: open_conversations %v, said %q; want %v, saying %q", c.args, bound, said, c.want, c.says)
		}
	}
	t.Setenv("VOICEAPI_MAX_OPEN_CONVERSATIONS", "25")
	if bound, said := set(); bound != float64(25) || !strings.Contains(said, "the server's --max-open-conversations") {
		t.Errorf("with VOICEAPI_MAX_OPEN_CONVERSATIONS=25: open_conversations %v, said %q", bound, said)
	}
	for _, v := range []string{"-1", strconv.Itoa(validate.MaxOpenConversations + 1)} {
		if out, err := run(t, "subscription", "set", "--data", dir, "--workspace", ws, "--max-open-conversations", v); err == nil || !strings.Contains(err.Error(), "--max-open-conversations must be") {
			t.Errorf("--max-open-conversations %s: %v\n%s", v, err, out)
		}
	}
}
