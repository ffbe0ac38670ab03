package e2e

import (
	"net/http"
	"net/http/httptest"
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
	b.uploadReturnsPDF(t)
	b.checkRetrievalQuery(t)
	b.run("add text", chromedp.Click(`//summary[text()="Add a text"]`, chromedp.BySearch),
		chromedp.WaitVisible("#t-content", chromedp.ByQuery),
		chromedp.SendKeys("#t-title", "Hours", chromedp.ByQuery),
		chromedp.SendKeys("#t-content", "We are open from nine to five.", chromedp.ByQuery),
		chromedp.Click(`//button[text()="Add text"]`, chromedp.BySearch),
		chromedp.WaitVisible(`//tr[td[text()="Hours"]]`, chromedp.BySearch))
	b.addURLSource(t)
	b.renameAfterStale(t)
	b.open("/knowledge-bases")
	b.audit("knowledge-bases")
}

// uploadReturnsPDF uploads a PDF, which is indexed with the sources table refreshed in
// place, and checks the progress bar and the download link.
func (b *browser) uploadReturnsPDF(t *testing.T) {
	t.Helper()
	pdf, err := filepath.Abs(filepath.Join("..", "..", "knowledge", "testdata", "files", "returns.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	b.run("upload", chromedp.SetUploadFiles("#kb-files", []string{pdf}, chromedp.ByQuery),
		chromedp.WaitVisible(`//ul[@class="uploads"]//span[text()="uploaded"]`, chromedp.BySearch),
		// The sources table is refreshed in place: no navigation happened.
		chromedp.WaitVisible(`//tr[td[text()="returns.pdf"]]//span[contains(@class, "badge")][text()="Indexed"]`, chromedp.BySearch))
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
}

// checkRetrievalQuery checks a retrieval test answers with scored chunks about refunds.
func (b *browser) checkRetrievalQuery(t *testing.T) {
	t.Helper()
	b.run("query", chromedp.SendKeys("#q-text", "how long do refunds take", chromedp.ByQuery),
		chromedp.Click(`form[aria-label="Test retrieval"] button`, chromedp.ByQuery),
		chromedp.WaitVisible("ol.chunks li blockquote", chromedp.ByQuery))
	if s := b.text("ol.chunks"); !strings.Contains(s, "Score") || !strings.Contains(strings.ToLower(s), "refund") {
		t.Errorf("retrieved chunks: %q", s)
	}
}

// addURLSource adds a URL source: pending while the page it names has not answered,
// then indexed, and the table says so without a reload (the page's marker survives).
func (b *browser) addURLSource(t *testing.T) {
	t.Helper()
	release := make(chan struct{})
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("Deliveries arrive within three working days."))
	}))
	defer site.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	b.run("add url", chromedp.Click(`//summary[text()="Add a URL"]`, chromedp.BySearch),
		chromedp.WaitVisible("#u-url", chromedp.ByQuery),
		chromedp.SendKeys("#u-url", site.URL+"/shipping", chromedp.ByQuery),
		chromedp.Click(`//button[text()="Add URL"]`, chromedp.BySearch),
		chromedp.WaitVisible(`//tr[td[contains(., "/shipping")]]//span[contains(@class, "badge")][text()="Pending"]`, chromedp.BySearch),
		chromedp.Evaluate(`window.stillHere = true`, nil))
	close(release)
	b.run("indexed", chromedp.WaitVisible(`//tr[td[contains(., "/shipping")]]//span[contains(@class, "badge")][text()="Indexed"]`, chromedp.BySearch))
	var still bool
	b.eval("no reload", `window.stillHere === true`, &still)
	if !still {
		t.Errorf("the page reloaded to show the new status")
	}
}

// renameAfterStale renames the knowledge base: indexing changed the record, so a rename
// from the page is refused as stale (412), with a reload offered; after the reload it
// goes through.
func (b *browser) renameAfterStale(t *testing.T) {
	t.Helper()
	b.run("stale rename", chromedp.SetValue("#kb-rename", "Store policies", chromedp.ByQuery),
		chromedp.Click(`//button[text()="Rename"]`, chromedp.BySearch),
		chromedp.WaitVisible(`//a[text()="Reload the knowledge base"]`, chromedp.BySearch),
		chromedp.Click(`//a[text()="Reload the knowledge base"]`, chromedp.BySearch),
		chromedp.WaitNotPresent(".alert", chromedp.ByQuery), // the reloaded page
		chromedp.WaitVisible("#kb-rename", chromedp.ByQuery))
	b.run("rename", chromedp.SetValue("#kb-rename", "Store policies", chromedp.ByQuery),
		chromedp.Click(`//button[text()="Rename"]`, chromedp.BySearch),
		chromedp.WaitVisible(`//h1[text()="Store policies"]`, chromedp.BySearch))
}
