package server_test

import (
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/postgres"
)

// A conversation survives a restart: the server and its database close mid-conversation,
// a new process opens the same data, and the next message continues it (its history
// reaches the model) and ends it into a call.
func TestConversationSurvivesARestart(t *testing.T) {
	stand := llmtest.New(t, data.LLMInternal)
	stand.Respond(func(r llmtest.Request) llmtest.Reply {
		return llmtest.Text("You said: " + r.LastUserText())
	})
	settings := cli.LLMSettings{AllowURLPrefixes: []string{stand.URL + "/"}}
	dir, pgURL := t.TempDir(), ""
	if testkit.OnPostgres() {
		pgURL = pgtest.Database(t)
	}
	open := func() (cli.Backend, *httptest.Server) {
		var db cli.Backend
		var err error
		if testkit.OnPostgres() {
			db, err = postgres.Open(t.Context(), postgres.Options{URL: pgURL, PasswordCost: bcrypt.MinCost, SecretKey: testkit.SecretKey})
		} else {
			db, err = bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost, SecretKey: testkit.SecretKey})
		}
		if err != nil {
			t.Fatal(err)
		}
		svc := cli.NewServices(db)
		svc.Conversations.Configure(cli.ConversationOptions(settings))
		return db, httptest.NewServer(cli.NewServerOn(db, svc, slog.New(slog.DiscardHandler)).Handler())
	}
	db, hs := open()
	owner := testkit.NewAccount(t, cli.NewServices(db), "owner@example.com", true)
	cfg, _ := structToMap(stand.LLMConfig())
	r := testkit.Request(t, hs.URL, "POST", "/api/v1/agents", owner.Token, map[string]any{"name": "A", "llm_config": cfg})
	testkit.Expect(t, r, 201)
	r = testkit.Request(t, hs.URL, "POST", "/api/v1/agents/"+r.Data()["id"].(string)+"/conversations", owner.Token, map[string]any{"version": "draft"})
	testkit.Expect(t, r, 201)
	id := r.Data()["id"].(string)
	testkit.Expect(t, testkit.Request(t, hs.URL, "POST", "/api/v1/conversations/"+id+"/messages", owner.Token, map[string]any{"content": "before"}), 200)
	hs.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, hs = open()
	defer db.Close()
	defer hs.Close()
	r = testkit.Request(t, hs.URL, "POST", "/api/v1/conversations/"+id+"/messages", owner.Token, map[string]any{"content": "after"})
	testkit.Expect(t, r, 200)
	last := stand.Last()
	if len(last.Messages) != 4 || last.Messages[1].Content != "before" || last.Messages[2].Content != "You said: before" {
		t.Errorf("the model's view after the restart = %+v", last.Messages)
	}
	end := testkit.Request(t, hs.URL, "POST", "/api/v1/conversations/"+id+"/end", owner.Token, nil)
	testkit.Expect(t, end, 200)
	var contents []string
	for _, it := range end.Data()["transcript"].([]any) {
		contents = append(contents, it.(map[string]any)["content"].(string))
	}
	if got := strings.Join(contents, "|"); got != data.DefaultWelcomeMessage+"|before|You said: before|after|You said: after" {
		t.Errorf("transcript = %s", got)
	}
}
