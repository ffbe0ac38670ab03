package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/fakeagents"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/strictjson"
)

// seeded is what both offline seeders (seedOffline, seedBulk) start from: the bench
// owner's state (credentials, API key, agents), its workspace, a context acting as that
// owner, and the call every seeded call is made from.
type seeded struct {
	st   *state
	ws   string
	pctx context.Context
	call data.CallCreate
}

// seedAccount creates, through the services, the bench owner (an instance admin with an
// API key) and agents full agents of tools tools each, and decodes the call template.
func seedAccount(ctx context.Context, svc *service.Services, agents, tools int) (*seeded, error) {
	st := &state{Email: "bench@voiceapi.local", Password: "bench-password-1"}
	u, err := svc.Users.CreateUser(ctx, data.UserCreate{Name: "Bench", Email: st.Email, Password: st.Password, IsAdmin: true})
	if err != nil {
		return nil, err
	}
	ws := u.PersonalWorkspaceID
	if _, st.Token, err = svc.Auth.CreateAPIKeyFor(ctx, u.ID, ws, data.APIKeyCreate{Name: "bench"}); err != nil {
		return nil, err
	}
	pctx := data.WithPrincipal(ctx, &data.Principal{UserID: u.ID, IsAdmin: true, WorkspaceID: ws, CurrentWorkspaceID: ws, Role: data.RoleOwner, Modules: data.Modules})
	for i := range agents {
		var in data.AgentCreate
		if err := strictjson.Decode(mustJSON(fakeagents.Body(fmt.Sprintf("Agent %d", i), tools)), &in); err != nil {
			return nil, err
		}
		a, err := svc.Agents.CreateAgent(pctx, in)
		if err != nil {
			return nil, fmt.Errorf("agent %d: %w", i, err)
		}
		st.Agents = append(st.Agents, a.ID)
	}
	s := &seeded{st: st, ws: ws, pctx: pctx}
	if err := json.Unmarshal(mustJSON(callBody("")), &s.call); err != nil {
		return nil, err
	}
	return s, nil
}
