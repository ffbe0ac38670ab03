package main

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/seal"
	"github.com/voiceapi/voiceapi/service"
)

// The agents and versions TestSealHeadersJobSurvivesKill stores with a credential header
// in the clear: the job writes 50 versions at a time, so 160 writes, long enough a run to
// be killed in.
const (
	sealKillAgents   = 8
	sealKillVersions = 1000 // an agent's bound
)

// sealKillTenant is the agents' header that is no credential: stored as it is.
const sealKillTenant = "X-Tenant: acme"

// TestSealHeadersJobSurvivesKill: agents and versions stored before credential headers
// were sealed (planted in the stopped server's store, listed as the upgrade lists them)
// make the next server start queue agent.seal_headers; it is SIGKILLed while that job
// runs. The server started again (same data: bbolt, or PostgreSQL with
// VOICEAPI_TEST_BACKEND=postgres) finishes the job: every row and version stores its
// credential header sealed once (it opens to the value it had, not to a sealed one), the
// other header as it was, no version lost, no agent left listed; the job succeeded on
// its second attempt.
func TestSealHeadersJobSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it")
	}
	bin := voiceapiBinary(t)
	dataDir := filepath.Join(t.TempDir(), "data")
	flags := killedJobFlags()
	srv, stdout := startServer(t, bin, dataDir, flags...)
	token := bootstrapToken(t, stdout)
	var agents []string
	for i := range sealKillAgents {
		agents = append(agents, createdID(t)(call(t, "POST", srv.url+"/api/v1/agents", token, fmt.Sprintf(`{"name":"Legacy %d"}`, i))))
	}
	srv.cmd.Process.Signal(syscall.SIGTERM)
	srv.cmd.Wait()
	plantClearHeaders(t, dataDir, agents)

	srv = restartServer(t, bin, dataDir, flags...) // the start queues the job: watched from readyz on
	srv = killWhileJobRuns(t, srv, bin, dataDir, flags, token, service.JobKindSealHeaders)
	srv.cmd.Process.Signal(syscall.SIGTERM)
	srv.cmd.Wait()
	checkSealedOnce(t, dataDir, agents)
}

// sealKillSecret is agent i's credential, as its header holds it.
func sealKillSecret(i int) string { return fmt.Sprintf("Bearer sk_live_%08d", i) }

// plantClearHeaders stores what an older voiceapi wrote for each agent of the stopped
// installation: a custom function whose Authorization header is in the clear, in the row
// and in sealKillVersions versions, and lists the agent to seal as the upgrade does.
func plantClearHeaders(t *testing.T, dataDir string, agents []string) {
	t.Helper()
	store, closeStore := openStoppedStore(t, dataDir)
	defer closeStore()
	for i, id := range agents {
		err := store.Update(context.Background(), func(tx service.Tx) error {
			row, err := tx.Agent(id)
			if err != nil {
				return err
			}
			row.LLMConfig.Tools = []*data.Tool{{Name: "crm", Type: "custom_function", HTTPMethod: "POST", APIEndpoint: "https://crm.example.com/o",
				CustomFunctionHeaders: []string{"Authorization: " + sealKillSecret(i), sealKillTenant}}}
			row.JSON, row.LastVersion = nil, sealKillVersions
			if err := tx.PutAgent(row, row.Status); err != nil {
				return err
			}
			for n := 1; n <= sealKillVersions; n++ {
				v := &data.AgentVersion{AgentID: id, VersionNumber: n, Name: row.Name, AgentConfig: row.AgentConfig, CreatedAt: row.CreatedAt}
				if err := tx.PutAgentVersion(v); err != nil {
					return err
				}
			}
			return tx.ListAgentToSeal(row.WorkspaceID, id)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// checkSealedOnce checks the stopped installation after the job: see
// TestSealHeadersJobSurvivesKill.
func checkSealedOnce(t *testing.T, dataDir string, agents []string) {
	t.Helper()
	store, closeStore := openStoppedStore(t, dataDir)
	defer closeStore()
	sealer := store.(interface{ ServiceOptions() service.Options }).ServiceOptions().Sealer
	bad := 0
	check := func(i int, what string, c data.AgentConfig) {
		if bad > 5 {
			return
		}
		var h []string
		if len(c.LLMConfig.Tools) == 1 {
			h = c.LLMConfig.Tools[0].CustomFunctionHeaders
		}
		if len(h) != 2 || h[1] != sealKillTenant {
			bad++
			t.Errorf("%s stores the headers %q, want the credential and %q", what, h, sealKillTenant)
			return
		}
		name, value, _ := data.SplitHeader(h[0])
		plain, err := sealer.Open(value)
		if name != "Authorization" || !seal.IsSealed(value) || err != nil || plain != sealKillSecret(i) {
			bad++
			t.Errorf("%s stores %q, opening to %q (%v); want %q sealed once", what, h[0], plain, err, sealKillSecret(i))
		}
	}
	err := store.View(context.Background(), func(tx service.Tx) error {
		for i, id := range agents {
			row, err := tx.Agent(id)
			if err != nil {
				return err
			}
			check(i, "agent "+id, row.AgentConfig)
			for n := 1; n <= sealKillVersions; n++ {
				v, err := tx.AgentVersion(id, n)
				if err != nil {
					return err
				}
				if v == nil {
					bad++
					t.Errorf("version %d of %s is lost", n, id)
					continue
				}
				check(i, fmt.Sprintf("version %d of %s", n, id), v.AgentConfig)
			}
			left, err := tx.AgentsToSeal(row.WorkspaceID, 1)
			if err != nil {
				return err
			}
			if len(left) > 0 {
				t.Errorf("agent %s still listed to seal", left[0])
			}
		}
		ws, err := tx.AllWorkspaces()
		if err != nil {
			return err
		}
		for _, w := range ws {
			jobs, _, err := tx.Jobs(w.ID, data.PageRequest{PerPage: 100})
			if err != nil {
				return err
			}
			for _, j := range jobs {
				if j.Kind == service.JobKindSealHeaders && (j.Status != data.JobSucceeded || j.Attempt != 2) {
					t.Errorf("the sealing job: %s on attempt %d, want succeeded on attempt 2 (the killed run, the finishing run)", j.Status, j.Attempt)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
