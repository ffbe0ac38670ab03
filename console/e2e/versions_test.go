package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestDeleteVersionFromTheConsole: the versions page offers Delete on the versions not in
// use only (neither the published one nor a variant of the rollout); confirmed, the
// version goes and the page says so; a version an open call runs on is offered, and the
// server's refusal, saying why, is what the console shows, the version kept.
func TestDeleteVersionFromTheConsole(t *testing.T) {
	b := signedIn(t)
	id := b.mustAPI(http.StatusCreated, "POST", "/api/v1/agents", map[string]any{"name": "Pruned"})["id"].(string)
	for range 4 {
		b.mustAPI(http.StatusNoContent, "POST", "/api/v1/agents/"+id+"/publish", map[string]any{})
	}
	b.mustAPI(http.StatusOK, "PUT", "/api/v1/agents/"+id+"/rollout", map[string]any{"variants": []any{
		map[string]any{"version": 4, "weight": 90}, map[string]any{"version": 3, "weight": 10}}})
	call := b.mustAPI(http.StatusCreated, "POST", "/api/v1/calls", map[string]any{"agent_id": id, "agent_version": 2, "direction": "web"})

	b.open("/agents/" + id + "/versions")
	b.audit("versions-delete")
	var offered []int
	b.eval("delete links", `[...document.querySelectorAll('a[href$="/delete"]')].map(a => +a.getAttribute("href").split("/")[4])`, &offered)
	if fmt.Sprint(offered) != "[2 1]" {
		t.Errorf("Delete offered on versions %v, want [2 1] (4 is published, 3 a rollout variant)", offered)
	}

	b.follow("delete version 1", chromedp.Click(`a[href$="/versions/1/delete"]`, chromedp.ByQuery))
	b.audit("version-delete-confirm")
	b.follow("confirm", chromedp.Click(`.confirm button.danger`, chromedp.ByQuery))
	if n := b.text(".notice"); n != "Deleted version 1." {
		t.Errorf("notice %q, want %q", n, "Deleted version 1.")
	}
	if res := b.api("GET", "/api/v1/agents/"+id+"/versions/1", nil); res.Status != http.StatusNotFound {
		t.Errorf("version 1 after the delete: %d, want 404", res.Status)
	}

	b.follow("delete version 2", chromedp.Click(`a[href$="/versions/2/delete"]`, chromedp.ByQuery))
	b.follow("confirm", chromedp.Click(`.confirm button.danger`, chromedp.ByQuery))
	if msg := b.text(`[role="alert"]`); !strings.Contains(msg, call["id"].(string)) {
		t.Errorf("the refusal of version 2 shows %q, want the open call %s named", msg, call["id"])
	}
	if res := b.api("GET", "/api/v1/agents/"+id+"/versions/2", nil); res.Status != http.StatusOK {
		t.Errorf("version 2 after the refused delete: %d, want 200", res.Status)
	}
}
