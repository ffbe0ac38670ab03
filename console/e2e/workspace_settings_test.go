package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The workspace's vector share is shown and set on the workspace page: empty is the
// default (null), a number is stored, a value the API refuses is shown under its label and
// changes nothing.
func TestWorkspaceVectorShare(t *testing.T) {
	b := signedIn(t)
	ws := "/api/v1/workspaces/" + b.env.Owner.WorkspaceID
	share := func() any {
		return b.mustAPI(http.StatusOK, "GET", ws, nil)["embeddings"].(map[string]any)["vector_share"]
	}
	value := func(sel string) string {
		var v string
		b.eval("value of "+sel, `document.querySelector(`+quoteJS(sel)+`).value`, &v)
		return v
	}
	b.open("/workspace")
	if v := value("#ws-share"); v != "" {
		t.Errorf("the default share shows as %q, want empty", v)
	}
	b.run("share 0.3", chromedp.SetValue("#ws-share", "0.3", chromedp.ByQuery))
	b.submit("#ws-share")
	b.waitText("Workspace saved")
	if v := share(); v != 0.3 {
		t.Errorf("stored vector_share %v, want 0.3", v)
	}
	if v := value("#ws-share"); v != "0.3" {
		t.Errorf("the saved share shows as %q, want 0.3", v)
	}

	// Past the bound (the browser's own check lifted, as an old page's would be): the
	// API's refusal is shown and the stored share stays.
	b.run("share 1.5", chromedp.Evaluate(`document.querySelector("#ws-share").removeAttribute("max"), true`, nil),
		chromedp.SetValue("#ws-share", "1.5", chromedp.ByQuery))
	b.submit("#ws-share")
	if s := b.text("#ws-settings [role=alert]"); !strings.Contains(s, "Vector share") {
		t.Errorf("the refusal reads %q, want it to name Vector share", s)
	}
	if v := share(); v != 0.3 {
		t.Errorf("after the refusal vector_share is %v, want 0.3", v)
	}

	b.open("/workspace")
	b.run("default", chromedp.SetValue("#ws-share", "", chromedp.ByQuery))
	b.submit("#ws-share")
	b.waitText("Workspace saved")
	if v := share(); v != nil {
		t.Errorf("emptied, vector_share is %v, want null (the default)", v)
	}
}

// Embeddings are turned off and on again on the workspace page.
func TestWorkspaceEmbeddingsEnabled(t *testing.T) {
	b := signedIn(t)
	ws := "/api/v1/workspaces/" + b.env.Owner.WorkspaceID
	enabled := func() any {
		return b.mustAPI(http.StatusOK, "GET", ws, nil)["embeddings"].(map[string]any)["enabled"]
	}
	checked := func() bool {
		var on bool
		b.eval("checked", `document.querySelector("#ws-emb-on").checked`, &on)
		return on
	}
	b.open("/workspace")
	if !checked() {
		t.Fatal("embeddings show as off on a new workspace")
	}
	b.run("off", chromedp.Click("#ws-emb-on", chromedp.ByQuery))
	b.submit("#ws-emb-on")
	b.waitText("Workspace saved")
	if v := enabled(); v != false {
		t.Errorf("unchecked, embeddings.enabled is %v", v)
	}
	if checked() {
		t.Error("after saving off, the box shows checked")
	}
	b.run("on", chromedp.Click("#ws-emb-on", chromedp.ByQuery))
	b.submit("#ws-emb-on")
	b.waitText("Workspace saved")
	if v := enabled(); v != true {
		t.Errorf("checked again, embeddings.enabled is %v", v)
	}
}
