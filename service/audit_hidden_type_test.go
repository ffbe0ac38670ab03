package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// A type filter of events the caller may read none of (a key with audit:read alone, and
// the agents' events) answers an empty last page at once, as a type of no event does:
// walking that type's events it passed over them all, counted, so past MaxAuditScan of
// them it answered an empty page with a next_cursor, telling that they are that many. The
// unfiltered log, walking the types the key reads (eventScopes), tells nothing either.
func TestAuditTypeTheCallerReadsNoneOfTellsNothing(t *testing.T) {
	clock := &fixedClock{time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	svc, store := newServices(t, clock, nil)
	appendChain(t, store, data.NewIDGen(), "ws_4", service.MaxAuditScan+1, func(i int, e *data.Event) {
		e.Type, e.Data = data.EventAgentUpdated, []byte(`{"id":"agt_01JD6ZJ7Q8W9X0Y1Z2A3B4C5D1"}`)
	})
	auditor := data.WithPrincipal(context.Background(), &data.Principal{UserID: "usr_01JD6ZJ7Q8W9X0Y1Z2A3B4C5D6", WorkspaceID: "ws_4",
		Role: data.RoleAdmin, Modules: data.EffectiveModules(data.RoleAdmin, nil), Scopes: []string{data.ScopeAuditRead}})
	for _, typ := range []string{data.EventAgentUpdated, data.EventAgentDeleted} {
		list, page, err := svc.Audit.ListAuditLog(auditor, data.AuditFilter{Type: typ}, data.PageRequest{PerPage: 15})
		if err != nil || len(list) != 0 || page.NextCursor != nil || page.PrevCursor != nil {
			t.Errorf("%s: %d events, next %v, prev %v, %v; want an empty last page", typ, len(list), page.NextCursor != nil, page.PrevCursor != nil, err)
		}
	}
	// Nor does the unfiltered log, which walks the types the key reads alone: it was an
	// empty page with a next_cursor, the agents' events passed over and counted.
	list, page, err := svc.Audit.ListAuditLog(auditor, data.AuditFilter{}, data.PageRequest{PerPage: 15})
	if err != nil || len(list) != 0 || page.NextCursor != nil || page.PrevCursor != nil {
		t.Errorf("the unfiltered log: %d events, next %v, prev %v, %v; want an empty last page", len(list), page.NextCursor != nil, page.PrevCursor != nil, err)
	}
	// A cursor there is refused as the walk refuses one it did not hand out: none was,
	// under this filter, so a malformed one or another list's is bad input, not a page.
	owner := data.WithPrincipal(context.Background(), &data.Principal{UserID: "usr_01JD6ZJ7Q8W9X0Y1Z2A3B4C5D6", WorkspaceID: "ws_4",
		Role: data.RoleOwner, Modules: data.EffectiveModules(data.RoleOwner, nil)})
	_, everyType, err := svc.Audit.ListAuditLog(owner, data.AuditFilter{}, data.PageRequest{PerPage: 15})
	if err != nil || everyType.NextCursor == nil {
		t.Fatalf("the owner's unfiltered log: next %v, %v; want a next_cursor", everyType.NextCursor != nil, err)
	}
	for _, cursor := range []string{"not-a-cursor", *everyType.NextCursor} {
		_, _, err := svc.Audit.ListAuditLog(auditor, data.AuditFilter{Type: data.EventAgentUpdated}, data.PageRequest{PerPage: 15, Cursor: cursor})
		wantFields(t, err, "cursor")
	}
}
