package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// The service itself refuses the chain's head and its verification to a caller who may
// not read every event (data.NeedAuditChain), whatever channel called it; an owner gets
// them. (The CLI verifies offline with VerifyAuditChain, under no principal.)
func TestAuditChainServiceNeedsEveryEvent(t *testing.T) {
	clock := &fixedClock{time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	svc, store := newServices(t, clock, nil)
	appendChain(t, store, data.NewIDGen(), "ws_4", 3, nil)
	as := func(role string, scopes, agents []string) context.Context {
		return data.WithPrincipal(context.Background(), &data.Principal{UserID: "usr_01JD6ZJ7Q8W9X0Y1Z2A3B4C5D6", WorkspaceID: "ws_4",
			CurrentWorkspaceID: "ws_4", Role: role, Modules: data.EffectiveModules(role, nil), Scopes: scopes, AgentIDs: agents})
	}
	for name, ctx := range map[string]context.Context{
		"audit:read alone":      as(data.RoleAdmin, []string{data.ScopeAuditRead}, nil),
		"no analytics:read":     as(data.RoleOwner, []string{data.ScopeAuditRead, "agents:read", "knowledge_base:read", "phone_numbers:read", "call_history:read"}, nil),
		"limited to one agent":  as(data.RoleOwner, nil, []string{"agt_01JD6ZJ7Q8W9X0Y1Z2A3B4C5D1"}),
		"a developer's session": as(data.RoleDeveloper, nil, nil),
	} {
		if _, err := svc.Audit.AuditHead(ctx); data.ErrorCode(err) != data.EFORBIDDEN {
			t.Errorf("head, %s: %v; want forbidden", name, err)
		}
		if _, err := svc.Audit.VerifyAuditLog(ctx); data.ErrorCode(err) != data.EFORBIDDEN {
			t.Errorf("verify, %s: %v; want forbidden", name, err)
		}
	}
	owner := as(data.RoleOwner, nil, nil)
	if head, err := svc.Audit.AuditHead(owner); err != nil || head.Hash == "" {
		t.Errorf("the owner's head: %+v, %v", head, err)
	}
	if v, err := svc.Audit.VerifyAuditLog(owner); err != nil || !v.Intact || v.Checked != 3 {
		t.Errorf("the owner's verification: %+v, %v", v, err)
	}
}
