package cli_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
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
	dir := t.TempDir()
	db, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	u, err := cli.NewServices(db).Users.CreateUser(context.Background(), data.UserCreate{Name: "Op", Email: "op@example.com", Password: "password123"})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	ws := u.PersonalWorkspaceID

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
	db, err = bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true})
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
