package server_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/validate"
)

// suppressionCSV is a list import of n distinct numbers from +1415<first>, each with a
// reason.
func suppressionCSV(first, n int) string {
	var b strings.Builder
	b.WriteString("phone_number,reason\n")
	for i := range n {
		fmt.Fprintf(&b, "+1415%07d,opted out %d\n", first+i, i)
	}
	return b.String()
}

// exportedSuppressions exports the workspace and returns its document's suppressions.
func exportedSuppressions(t *testing.T, s *testkit.Server, ws, token string) []any {
	t.Helper()
	exp := s.Do("GET", "/api/v1/workspaces/"+ws+"/export", token, nil)
	testkit.Expect(t, exp, 200)
	var doc map[string]any
	if err := json.Unmarshal(exp.Body, &doc); err != nil {
		t.Fatal(err)
	}
	list, _ := doc["suppressions"].([]any)
	return list
}

// suppressionKeys is each entry of a document's list as "number reason created_at".
func suppressionKeys(list []any) []string {
	out := make([]string, len(list))
	for i, e := range list {
		m := e.(map[string]any)
		out[i] = fmt.Sprintf("%v %v %v", m["phone_number"], m["reason"], m["created_at"])
	}
	slices.Sort(out)
	return out
}

// A list longer than one list import allows (built by two) exports in a document that
// the import takes whole: a fresh workspace gets every number, with its reason and date.
func TestExportedSuppressionListOverOneImportReimports(t *testing.T) {
	s := testkit.NewServer(t, nil)
	owner := s.Owner.Token
	for _, csv := range []string{suppressionCSV(2_000_000, validate.MaxSuppressionImport), suppressionCSV(3_000_000, 1_000)} {
		testkit.Expect(t, s.Do("POST", "/api/v1/suppressions/import", owner, csv, "Content-Type", "text/csv"), 200)
	}
	want := validate.MaxSuppressionImport + 1_000
	// One export, read for its list and imported: each pass over 101,000 numbers is
	// seconds under -race.
	exp := s.Do("GET", "/api/v1/workspaces/"+s.Owner.WorkspaceID+"/export", owner, nil)
	testkit.Expect(t, exp, 200)
	var doc map[string]any
	if err := json.Unmarshal(exp.Body, &doc); err != nil {
		t.Fatal(err)
	}
	source, _ := doc["suppressions"].([]any)
	if len(source) != want {
		t.Fatalf("the export holds %d numbers, want %d", len(source), want)
	}
	sourceKeys := suppressionKeys(source) // before the import document is changed below

	ws := s.Do("POST", "/api/v1/workspaces", owner, map[string]any{"name": "Copy"})
	testkit.Expect(t, ws, 201)
	target := ws.Data()["id"].(string)
	tok := s.TokenIn(s.Owner, target)
	doc["numbers"] = []any{} // the source's would be taken (409); none were made here anyway
	imp := s.Do("POST", "/api/v1/workspaces/"+target+"/import", tok, doc)
	testkit.Expect(t, imp, 201)
	if c := at(imp.Data(), "suppressions"); string(mustJSON(c)) != fmt.Sprintf(`{"added":%d,"duplicates":0,"rows":%d}`, want, want) {
		t.Errorf("the import's suppression counts %v", c)
	}
	if got := suppressionKeys(exportedSuppressions(t, s, target, tok)); !slices.Equal(got, sourceKeys) {
		t.Fatalf("the copy's list differs from the source's: %d entries, want %d", len(got), want)
	}
}

// Past the bound (lowered to 5 for the test) an add, a list import (CSV and JSON) and a
// workspace import are each 422 naming their field, saying the bound and how many the
// list holds, and change nothing: not the list, not the workspace import's other records.
func TestSuppressionBoundRefusesEveryWayIn(t *testing.T) {
	s := testkit.NewServerWith(t, nil, func(svc *service.Services) { svc.LowerSuppressionBound(5) })
	owner := s.Owner.Token
	testkit.Expect(t, s.Do("POST", "/api/v1/suppressions/import", owner, suppressionCSV(0, 3), "Content-Type", "text/csv"), 200)
	before := suppressionKeys(exportedSuppressions(t, s, s.Owner.WorkspaceID, owner))
	unchanged := func(when string, r *testkit.Response, field, holds string) {
		t.Helper()
		testkit.ExpectFields(t, r, field)
		msg := fmt.Sprint(at(r.JSON(), "errors."+field+".0"))
		if !strings.Contains(msg, "at most 5 numbers") || !strings.Contains(msg, "has "+holds) {
			t.Errorf("%s: the message %q does not say the bound and what the list holds", when, msg)
		}
		if got := suppressionKeys(exportedSuppressions(t, s, s.Owner.WorkspaceID, owner)); !slices.Equal(got, before) {
			t.Errorf("%s changed the list: %d entries, want %d", when, len(got), len(before))
		}
	}

	unchanged("a CSV import", s.Do("POST", "/api/v1/suppressions/import", owner, suppressionCSV(2, 4), "Content-Type", "text/csv"), "rows", "3")
	rows := []any{map[string]any{"phone_number": "+14150000010"}, map[string]any{"phone_number": "+14150000011"}, map[string]any{"phone_number": "+14150000012"}}
	unchanged("a JSON import", s.Do("POST", "/api/v1/suppressions/import", owner, map[string]any{"rows": rows}), "rows", "3")
	testkit.Expect(t, s.Do("POST", "/api/v1/suppressions/import", owner, map[string]any{"rows": rows[:1]}), 200) // 3 + 1 = 4
	testkit.Expect(t, s.Do("POST", "/api/v1/suppressions", owner, map[string]any{"phone_number": "+14150000020"}), 201)
	before = suppressionKeys(exportedSuppressions(t, s, s.Owner.WorkspaceID, owner))
	unchanged("an add", s.Do("POST", "/api/v1/suppressions", owner, map[string]any{"phone_number": "+14150000021"}), "phone_number", "5")
	testkit.Expect(t, s.Do("POST", "/api/v1/suppressions", owner, map[string]any{"phone_number": "+14150000020"}), 200)

	doc := map[string]any{"format": "voiceapi.workspace", "version": 1,
		"webhooks":     []any{map[string]any{"url": "https://hooks.example.com/voice", "events": []string{"agent.published"}, "enabled": true}},
		"suppressions": []any{map[string]any{"phone_number": "+14150000001"}, map[string]any{"phone_number": "+14150000030"}}}
	unchanged("a workspace import", s.Do("POST", "/api/v1/workspaces/"+s.Owner.WorkspaceID+"/import", owner, doc), "suppressions", "5")
	if hooks := s.Do("GET", "/api/v1/webhooks", owner, nil).List(); len(hooks) != 0 {
		t.Errorf("the refused import left %d webhooks", len(hooks))
	}
}
