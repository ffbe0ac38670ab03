package storetest

import (
	"bytes"
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/seal"
	"github.com/voiceapi/voiceapi/service"
)

// ClearSecret is the credential header value StoreClearHeaders writes in the clear.
const ClearSecret = "Bearer sk_live_abcdefgh1234"

// SealWorkspace is the workspace StoreClearHeaders writes into.
const SealWorkspace = "ws_01JD6000000000000000000000"

// StoreClearHeaders writes into s what a voiceapi from before credential headers were
// sealed left: a workspace whose published agent holds ClearSecret in the clear in its
// row and in both of its versions, beside a harmless header. It returns the agent's id.
// The engine's test then makes the store as its older schema left it and reopens it, so
// that the upgrade lists the agent.
func StoreClearHeaders(t *testing.T, s service.Store) string {
	t.Helper()
	const id = "agt_01JD6000000000000000000001"
	t0 := data.NewTime(time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC))
	a := storedAgent(id, SealWorkspace, data.AgentStatusPublished)
	a.CreatedAt, a.UpdatedAt, a.LastVersion = t0, t0, 2
	published := 2
	a.PublishedVersion = &published
	tool := func(extra string) []*data.Tool {
		return []*data.Tool{{Name: "crm", Type: "custom_function", HTTPMethod: "POST", APIEndpoint: "https://crm.example.com/" + extra,
			CustomFunctionHeaders: []string{"Authorization: " + ClearSecret, "X-Tenant: acme"}}}
	}
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutWorkspace(&data.WorkspaceRecord{Workspace: data.Workspace{ID: SealWorkspace, Name: "w", CreatedAt: t0, UpdatedAt: t0}}); err != nil {
			return err
		}
		for n := 1; n <= 2; n++ {
			v := &data.AgentVersion{AgentID: id, VersionNumber: n, Name: a.Name, AgentConfig: a.AgentConfig, CreatedAt: t0, PublishedBy: "usr_1"}
			v.LLMConfig.Tools = tool([]string{"", "v1", "v2"}[n])
			if err := tx.PutAgentVersion(v); err != nil {
				return err
			}
		}
		a.LLMConfig.Tools = tool("v2")
		return tx.PutAgent(a, "")
	})
	return id
}

// CheckHeadersSealed runs the upgrade's job (agent.seal_headers) over s, upgraded after
// StoreClearHeaders (agent id listed), and checks that afterwards no stored byte of the
// agent, row or version, holds the secret (raw returns them, decoded as the engine keeps
// them), that each sealed value opens to it, and that sealing changed nothing else: the
// agent's JSON and so its ETag, its revision for the publish gate, each version as read,
// their diff, the workspace's event chain, and no version was made. A second run over
// the agent listed again rewrites nothing.
func CheckHeadersSealed(t *testing.T, s service.Store, opts service.Options, id string, raw func() []byte) {
	t.Helper()
	svc, err := service.New(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := data.WithPrincipal(context.Background(), &data.Principal{UserID: "usr_1", WorkspaceID: SealWorkspace, CurrentWorkspaceID: SealWorkspace, Role: data.RoleOwner})
	type seen struct {
		agent    []byte
		versions [2]*data.AgentVersion
		diff     []data.Change
		head     string
	}
	read := func() (out seen) {
		t.Helper()
		var err error
		if out.agent, err = svc.Agents.AgentJSON(ctx, id); err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= 2; n++ {
			if out.versions[n-1], err = svc.Agents.AgentVersion(ctx, id, n); err != nil {
				t.Fatal(err)
			}
		}
		two := 2
		if out.diff, err = svc.Agents.DiffAgentVersions(ctx, id, 1, &two); err != nil {
			t.Fatal(err)
		}
		view(t, s, func(tx service.Tx) (err error) {
			out.head, err = tx.EventHead(SealWorkspace)
			return err
		})
		return out
	}
	if !bytes.Contains(raw(), []byte(ClearSecret)) {
		t.Fatal("the fixture holds no clear header: the test would prove nothing")
	}
	before := read()
	runSealJob(t, s, svc, id)
	if b := raw(); bytes.Contains(b, []byte(ClearSecret)) || !bytes.Contains(b, []byte("X-Tenant: acme")) {
		t.Errorf("after the job the stored bytes hold the secret (%v) or lost the harmless header", bytes.Contains(b, []byte(ClearSecret)))
	}
	after := read()
	if !bytes.Equal(before.agent, after.agent) || data.ETagOfBytes(before.agent) != data.ETagOfBytes(after.agent) {
		t.Errorf("the agent as answered changed:\n%s\n%s", before.agent, after.agent)
	}
	if !reflect.DeepEqual(before.versions, after.versions) || !reflect.DeepEqual(before.diff, after.diff) || before.head != after.head {
		t.Errorf("sealing changed the versions, their diff or the events:\n%+v %+v %q\n%+v %+v %q",
			before.versions, before.diff, before.head, after.versions, after.diff, after.head)
	}
	var rev uint64
	view(t, s, func(tx service.Tx) error {
		row, err := tx.Agent(id)
		if err != nil {
			return err
		}
		if row.LastVersion != 2 || !row.UpdatedAt.Equal(time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)) {
			t.Errorf("the row's last_version %d, updated_at %v: sealing is no edit", row.LastVersion, row.UpdatedAt)
		}
		configs := []data.AgentConfig{row.AgentConfig}
		for n := 1; n <= 2; n++ {
			v, err := tx.AgentVersion(id, n)
			if err != nil {
				return err
			}
			configs = append(configs, v.AgentConfig)
		}
		if v, _ := tx.AgentVersion(id, 3); v != nil {
			t.Errorf("the job made a version")
		}
		// What a call gets: the value opened (service.openConfig) is the secret.
		for i, c := range configs {
			_, value, _ := data.SplitHeader(c.LLMConfig.Tools[0].CustomFunctionHeaders[0])
			if plain, err := opts.Sealer.Open(value); !seal.IsSealed(value) || err != nil || plain != ClearSecret {
				t.Errorf("config %d: the header stored as %q opens to %q (%v)", i, value, plain, err)
			}
		}
		rev, err = tx.AgentRevision(id)
		return err
	})
	// Run again: nothing left in the clear, nothing rewritten.
	update(t, s, func(tx service.Tx) error { return tx.ListAgentToSeal(SealWorkspace, id) })
	runSealJob(t, s, svc, id)
	view(t, s, func(tx service.Tx) error {
		again, err := tx.AgentRevision(id)
		if again != rev {
			t.Errorf("a second run rewrote the sealed row (revision %d → %d)", rev, again)
		}
		return err
	})
}

// runSealJob runs the upgrade's job, as serve starts it (AtStart queues it), until agent
// id is off its workspace's list.
func runSealJob(t *testing.T, s service.Store, svc *service.Services, id string) {
	t.Helper()
	runner := svc.Jobs.NewRunner(service.RunnerOptions{Owner: "upgrade", Kinds: []string{service.JobKindSealHeaders}, Poll: 10 * time.Millisecond})
	runner.Start(context.Background())
	defer func() {
		if err := runner.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var left []string
		view(t, s, func(tx service.Tx) (err error) {
			left, err = tx.AgentsToSeal(SealWorkspace, 10)
			return err
		})
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still listed after 30 s: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
