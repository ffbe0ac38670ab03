package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestKnowledgeBase: create a knowledge base, upload a PDF and watch it become indexed
// without a reload, ask the test-retrieval box, add a text, rename.
func TestKnowledgeBase(t *testing.T) {
	b := newBrowser(t)
	e := b.env
	b.signIn(e.Owner.Email, e.Owner.Password, "")
	b.open("/knowledge-bases")
	b.run("create", chromedp.SendKeys("#kb-name", "Policies", chromedp.ByQuery),
		chromedp.Click(`form.inline-create button`, chromedp.ByQuery),
		chromedp.WaitVisible(".drop", chromedp.ByQuery))
	pdf, err := filepath.Abs(filepath.Join("..", "..", "knowledge", "testdata", "files", "returns.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	b.run("upload", chromedp.SetUploadFiles("#kb-files", []string{pdf}, chromedp.ByQuery),
		chromedp.WaitVisible(`//ul[@class="uploads"]//span[text()="uploaded"]`, chromedp.BySearch),
		// The sources table is refreshed in place: no navigation happened.
		chromedp.WaitVisible(`//tr[td[text()="returns.pdf"]]//span[contains(@class, "badge")][text()="indexed"]`, chromedp.BySearch))
	var progress string
	b.eval("progress", `document.querySelector(".uploads progress").value + "/" + document.querySelector(".uploads progress").max`, &progress)
	if progress != "100/100" {
		t.Errorf("progress bar at %s", progress)
	}
	var href string
	b.eval("download", `document.querySelector('a[download]').getAttribute("href")`, &href)
	if !strings.HasSuffix(href, "/content") {
		t.Errorf("download link %q", href)
	}
	b.audit("knowledge-base")

	b.run("query", chromedp.SendKeys("#q-text", "how long do refunds take", chromedp.ByQuery),
		chromedp.Click(`form[aria-label="Test retrieval"] button`, chromedp.ByQuery),
		chromedp.WaitVisible("ol.chunks li blockquote", chromedp.ByQuery))
	if s := b.text("ol.chunks"); !strings.Contains(s, "Score") || !strings.Contains(strings.ToLower(s), "refund") {
		t.Errorf("retrieved chunks: %q", s)
	}

	b.run("add text", chromedp.Click(`//summary[text()="Add a text"]`, chromedp.BySearch),
		chromedp.WaitVisible("#t-content", chromedp.ByQuery),
		chromedp.SendKeys("#t-title", "Hours", chromedp.ByQuery),
		chromedp.SendKeys("#t-content", "We are open from nine to five.", chromedp.ByQuery),
		chromedp.Click(`//button[text()="Add text"]`, chromedp.BySearch),
		chromedp.WaitVisible(`//tr[td[text()="Hours"]]`, chromedp.BySearch))
	b.run("rename", chromedp.SetValue("#kb-rename", "Store policies", chromedp.ByQuery),
		chromedp.Click(`//button[text()="Rename"]`, chromedp.BySearch),
		chromedp.WaitVisible(`//h1[text()="Store policies"]`, chromedp.BySearch))
	b.open("/knowledge-bases")
	b.audit("knowledge-bases")
}
