package client_test

import (
	"context"
	"testing"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
)

// The client's audit chain calls follow the API's rule (data.NeedAuditChain): a key with
// audit:read that reads only some modules gets 403 for the head and the verification,
// and reads its share of the log.
func TestAuditChainOfAKeyReadingSomeModules(t *testing.T) {
	s := newServer(t, nil)
	ctx := context.Background()
	key, err := s.client(t).APIKeys.Create(ctx, data.APIKeyCreate{Name: "auditor", Scopes: []string{data.ScopeAuditRead, "agents:read"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(s.URL, client.WithToken(key.Token))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Audit.Head(ctx)
	if e := mustErr(t, err, 403); e.Code != data.EFORBIDDEN {
		t.Errorf("head: %v", e)
	}
	_, err = c.Audit.Verify(ctx)
	if e := mustErr(t, err, 403); e.Code != data.EFORBIDDEN {
		t.Errorf("verify: %v", e)
	}
	if _, _, err := c.Audit.List(ctx, data.AuditFilter{}, data.PageRequest{}); err != nil {
		t.Errorf("the key's share of the log: %v", err)
	}
}
