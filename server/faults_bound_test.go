package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// TestImportFaultsAreBounded: an import of many unknown members (any user's, up to 100
// MiB) is answered with the first data.MaxFaults faults and the true total in the message,
// not a list larger than the body; nothing is stored.
func TestImportFaultsAreBounded(t *testing.T) {
	e := exportEnv(t)
	const unknown = 3 * data.MaxFaults
	doc := goodDocument()
	for i := range unknown {
		doc[fmt.Sprintf("unknown_%05d", i)] = i
	}
	before := e.countWorkspaceRecords(e.Owner.WorkspaceID)
	r := e.do("POST", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/import", e.Owner.Token, doc)
	expect(t, r, 422)
	if n := len(r.FieldErrors()); n != data.MaxFaults {
		t.Errorf("%d paths answered, want the first %d", n, data.MaxFaults)
	}
	msg, _ := r.JSON()["message"].(string)
	if want := fmt.Sprintf("(and %s more errors)", data.Thousands(unknown-1)); !strings.HasSuffix(msg, want) {
		t.Errorf("message %q does not keep the total: want it to end %q", msg, want)
	}
	if len(r.Body) > 200_000 {
		t.Errorf("a %d-fault body answered %d bytes", unknown, len(r.Body))
	}
	if after := e.countWorkspaceRecords(e.Owner.WorkspaceID); after != before {
		t.Errorf("a refused import stored something:\nbefore %s\nafter  %s", before, after)
	}
}

// TestSuppressionImportFaultsAreBoundedInLineOrder: a CSV of bad rows is answered with the
// first data.MaxFaults rows' faults, headed by the first line (not "Line 10" before
// "Line 2", as paths sorted as text put it), the total counted; nothing is stored.
func TestSuppressionImportFaultsAreBoundedInLineOrder(t *testing.T) {
	e := newEnv(t)
	const rows = 3 * data.MaxFaults
	var csv strings.Builder
	csv.WriteString("phone_number\n")
	for range rows {
		csv.WriteString("not a number\n")
	}
	r := e.do("POST", "/api/v1/suppressions/import", e.Owner.Token, csv.String(), "Content-Type", "text/csv")
	expect(t, r, 422)
	faults := r.FieldErrors()
	if len(faults) != data.MaxFaults || faults["rows.line_2.phone_number"] == nil || faults[fmt.Sprintf("rows.line_%d.phone_number", data.MaxFaults+1)] == nil {
		t.Errorf("%d paths answered, want lines 2 to %d", len(faults), data.MaxFaults+1)
	}
	msg, _ := r.JSON()["message"].(string)
	if want := fmt.Sprintf("(and %s more errors)", data.Thousands(rows-1)); !strings.HasPrefix(msg, "Line 2: ") || !strings.HasSuffix(msg, want) {
		t.Errorf("message %q: want it to start with Line 2 and end %q", msg, want)
	}
	if got := listIDs(t, e.do("GET", "/api/v1/suppressions", e.Owner.Token, nil)); len(got) != 0 {
		t.Errorf("a refused import stored %d numbers", len(got))
	}
}
