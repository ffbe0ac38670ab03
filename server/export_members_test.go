package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestExportImportSettingsAndSuppressionsOverHTTP: the export route carries the price
// table, the embedding provider (key masked) and the suppression list; the import route
// refuses a document with bad members with 422 naming each by its document path, and one
// refused inside its transaction (a number taken, 409) sets none of them; a good one sets
// them all and counts the suppressions.
func TestExportImportSettingsAndSuppressionsOverHTTP(t *testing.T) {
	s := testkit.NewServer(t, nil)
	owner := s.Owner.Token
	testkit.Expect(t, s.Do("PUT", "/api/v1/price-table", owner, map[string]any{"currency": "EUR", "prices": []any{
		map[string]any{"provider": "groq", "model": "*", "unit": "llm_input_1m_tokens", "price": "0.59"}}}), 200)
	testkit.Expect(t, s.Do("PUT", "/api/v1/workspaces/"+s.Owner.WorkspaceID, owner, map[string]any{"embeddings": map[string]any{
		"base_url": "https://embeddings.example.com/v1", "model": "text-embedding-3-small", "api_key": "sk-embeddings-secret-7788", "vector_share": 0.7, "enabled": false}}), 200)
	for _, n := range []string{"+14155550161", "+14155550162"} {
		testkit.Expect(t, s.Do("POST", "/api/v1/suppressions", owner, map[string]any{"phone_number": n, "reason": "opted out"}), 201)
	}
	testkit.Expect(t, s.Do("POST", "/api/v1/numbers", owner, map[string]any{"phone_number": "+14155550160", "provider": "sip"}), 201)

	exp := s.Do("GET", "/api/v1/workspaces/"+s.Owner.WorkspaceID+"/export", owner, nil)
	testkit.Expect(t, exp, 200)
	var doc map[string]any
	if err := json.Unmarshal(exp.Body, &doc); err != nil {
		t.Fatal(err)
	}
	if at(doc, "workspace.price_table.prices.0.price") != "0.59" || at(doc, "workspace.embeddings.api_key") != "****7788" || at(doc, "workspace.embeddings.vector_share") != 0.7 || at(doc, "workspace.embeddings.enabled") != false ||
		at(doc, "suppressions.1.phone_number") != "+14155550162" || strings.Contains(string(exp.Body), "sk-embeddings-secret") {
		t.Fatalf("the export's members: %v, %v, %v", at(doc, "workspace.price_table"), at(doc, "workspace.embeddings"), doc["suppressions"])
	}

	ws := s.Do("POST", "/api/v1/workspaces", owner, map[string]any{"name": "Copy"})
	testkit.Expect(t, ws, 201)
	target := ws.Data()["id"].(string)
	tok := s.TokenIn(s.Owner, target)
	untouched := func(when string) {
		t.Helper()
		if p := s.Do("GET", "/api/v1/price-table", tok, nil).Data(); p["currency"] != "USD" || p["updated_at"] != nil {
			t.Errorf("%s: the price table %v", when, p)
		}
		if l := s.Do("GET", "/api/v1/suppressions", tok, nil).List(); len(l) != 0 {
			t.Errorf("%s: the suppression list %v", when, l)
		}
		if e := at(s.Do("GET", "/api/v1/workspaces/"+target, tok, nil).Data(), "embeddings"); at(e, "base_url") != nil || at(e, "vector_share") != nil || at(e, "enabled") != true {
			t.Errorf("%s: the embedding setting %v", when, e)
		}
	}

	bad := mustJSON(doc)
	var broken map[string]any
	_ = json.Unmarshal(bad, &broken)
	at(broken, "workspace.price_table.prices.0").(map[string]any)["price"] = "-1"
	at(broken, "workspace.embeddings").(map[string]any)["base_url"] = "ftp://embeddings.example.com"
	at(broken, "workspace.embeddings").(map[string]any)["vector_share"] = 1.0001
	at(broken, "suppressions.1").(map[string]any)["phone_number"] = "12"
	testkit.ExpectFields(t, s.Do("POST", "/api/v1/workspaces/"+target+"/import", tok, broken),
		"workspace.price_table.prices.0.price", "workspace.embeddings.base_url", "workspace.embeddings.vector_share", "suppressions.1.phone_number")
	untouched("after a 422")

	// The number is still the source's: the transaction that set the rest rolls back.
	testkit.Expect(t, s.Do("POST", "/api/v1/workspaces/"+target+"/import", tok, doc), 409)
	untouched("after a 409")

	doc["numbers"] = []any{}
	imp := s.Do("POST", "/api/v1/workspaces/"+target+"/import", tok, doc)
	testkit.Expect(t, imp, 201)
	if c := at(imp.Data(), "suppressions"); string(mustJSON(c)) != `{"added":2,"duplicates":0,"rows":2}` {
		t.Errorf("the import's suppression counts %v", c)
	}
	if p := s.Do("GET", "/api/v1/price-table", tok, nil).Data(); p["currency"] != "EUR" || at(p, "prices.0.price") != "0.59" {
		t.Errorf("the imported price table %v", p)
	}
	if l := s.Do("GET", "/api/v1/suppressions", tok, nil).List(); len(l) != 2 || at(l[0].(map[string]any), "reason") != "opted out" {
		t.Errorf("the imported suppression list %v", l)
	}
	if e := s.Do("GET", "/api/v1/workspaces/"+target, tok, nil).Data()["embeddings"].(map[string]any); e["model"] != "text-embedding-3-small" || e["api_key"] != nil || e["vector_share"] != 0.7 || e["enabled"] != false {
		t.Errorf("the imported embedding provider %v (a masked key imports as null)", e)
	}
}
