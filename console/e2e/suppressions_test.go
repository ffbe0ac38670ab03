package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/voiceapi/voiceapi/service"
)

// TestSuppressionPage: from the campaigns page to the suppression list; a number added
// is listed with its reason, a bad one is refused beside its field in the label's words
// and stores nothing, a CSV with a bad line is refused naming the line and a good one
// adds its rows, and a number is removed through the confirmation page; each action
// ends on a flash message.
func TestSuppressionPage(t *testing.T) {
	b := signedIn(t)
	dir := t.TempDir()
	bad, good := filepath.Join(dir, "bad.csv"), filepath.Join(dir, "good.csv")
	os.WriteFile(bad, []byte("phone_number,reason\n+14155550111,asked\nnot a number,typo\n"), 0o600)
	os.WriteFile(good, []byte("phone_number,reason\n+14155550111,asked\n+14155550112,complaint\n"), 0o600)

	b.open("/campaigns")
	b.followText("Suppression list")
	b.waitText("No numbers on the suppression list.")

	b.clickText("Add a number")
	b.run("bad number", chromedp.WaitVisible("#s-phone", chromedp.ByQuery), chromedp.SetValue("#s-phone", "12", chromedp.ByQuery))
	b.submit("#s-phone")
	b.run("the field's error", chromedp.WaitVisible("#s-phone-err", chromedp.ByQuery))
	if msg := b.text("#s-phone-err"); !strings.Contains(strings.ToLower(msg), "phone number \"12\"") || strings.Contains(msg, "phone_number") {
		t.Errorf("the refusal beside the field: %q", msg)
	}
	if got := b.listCount("/api/v1/suppressions", "", ""); got != 0 {
		t.Fatalf("a refused number stored %d entries", got)
	}

	b.run("good number", chromedp.SetValue("#s-phone", "+14155550100", chromedp.ByQuery), chromedp.SetValue("#s-reason", "asked not to be called", chromedp.ByQuery))
	b.submit("#s-phone")
	b.waitText("+14155550100 added to the suppression list.")
	if row := b.text("#suppressions tbody"); !strings.Contains(row, "+14155550100") || !strings.Contains(row, "asked not to be called") {
		t.Errorf("the list: %q", row)
	}

	upload := func(csv string) {
		b.clickText("Upload a CSV")
		b.run("file", chromedp.WaitVisible("#s-file", chromedp.ByQuery), chromedp.SetUploadFiles("#s-file", []string{csv}, chromedp.ByQuery))
		b.submit("#s-file")
	}
	upload(bad)
	b.waitText("Line 3")
	if msg := b.text(".alert"); !strings.Contains(msg, "not a number") {
		t.Errorf("the refusal does not name the row: %q", msg)
	}
	b.audit("suppressions-refused") // the bad rows' messages describe the file's field
	if got := b.listCount("/api/v1/suppressions", "", ""); got != 1 {
		t.Fatalf("a refused upload left %d entries, want 1", got)
	}
	upload(good)
	b.waitText("2 numbers added to the suppression list.")
	if rows := b.text("#suppressions tbody"); !strings.Contains(rows, "+14155550112") || !strings.Contains(rows, "complaint") {
		t.Errorf("the list after the upload: %q", rows)
	}
	b.audit("suppressions")

	b.followText("Remove +14155550112")
	b.waitText("Remove +14155550112 from the suppression list?")
	b.audit("suppression-delete")
	b.followText("Remove number")
	b.waitText("Number removed from the suppression list.")
	if rows := b.text("#suppressions tbody"); strings.Contains(rows, "+14155550112") || !strings.Contains(rows, "+14155550111") {
		t.Errorf("the list after the removal: %q", rows)
	}
	if got := b.listCount("/api/v1/suppressions", "phone_number", "+14155550112"); got != 0 {
		t.Errorf("the removed number is still listed by the API")
	}
}

// TestSuppressionBoundOnThePage: the suppression list's bound (validate.MaxSuppressions,
// lowered to 3 here) is stated on the page when an add or a CSV import would pass it: the
// API's refusal, naming the bound, what the list holds and what the addition would make,
// shows beside the refused form (and the number beside its field, still typed), and
// nothing is added. An add that fills the list to its bound passes, and so does a number
// listed already when the list is full.
func TestSuppressionBoundOnThePage(t *testing.T) {
	const bound = 3
	b := newBrowserWith(t, func(svc *service.Services) { svc.LowerSuppressionBound(bound) })
	b.signIn(b.env.Owner.Email, b.env.Owner.Password, "")
	for _, n := range []string{"+14155550101", "+14155550102"} {
		b.mustAPI(http.StatusCreated, "POST", "/api/v1/suppressions", map[string]any{"phone_number": n})
	}
	listed := func() int { return b.listCount("/api/v1/suppressions", "", "") }
	add := func(number string) {
		b.open("/suppressions")
		b.clickText("Add a number")
		b.run("number", chromedp.WaitVisible("#s-phone", chromedp.ByQuery), chromedp.SetValue("#s-phone", number, chromedp.ByQuery))
		b.submit("#s-phone")
	}

	add("+14155550103")
	b.waitText("+14155550103 added to the suppression list.")

	add("+14155550104")
	want := fmt.Sprintf("holds at most %d numbers: it has %d, and the 1 new here would make %d.", bound, bound, bound+1)
	if msg := b.text("#s-phone-err"); !strings.Contains(msg, want) {
		t.Errorf("beside the number: %q, want it to say %q", msg, want)
	}
	if msg := b.text("#add-suppression .alert"); !strings.Contains(msg, want) {
		t.Errorf("beside the add form: %q, want it to say %q", msg, want)
	}
	var typed string
	b.run("the typed number", chromedp.Value("#s-phone", &typed, chromedp.ByQuery))
	if typed != "+14155550104" {
		t.Errorf("the refused form lost the number: %q", typed)
	}
	if n := listed(); n != bound {
		t.Fatalf("a refused add left %d numbers on the list, want %d", n, bound)
	}

	csv := filepath.Join(t.TempDir(), "more.csv")
	os.WriteFile(csv, []byte("phone_number,reason\n+14155550103,listed\n+14155550105,new\n+14155550106,new\n"), 0o600)
	b.open("/suppressions")
	b.clickText("Upload a CSV")
	b.run("file", chromedp.WaitVisible("#s-file", chromedp.ByQuery), chromedp.SetUploadFiles("#s-file", []string{csv}, chromedp.ByQuery))
	b.submit("#s-file")
	want = fmt.Sprintf("holds at most %d numbers: it has %d, and the 2 new here would make %d.", bound, bound, bound+2)
	if msg := b.text("#import-suppressions .alert"); !strings.Contains(msg, want) {
		t.Errorf("beside the upload form: %q, want it to say %q", msg, want)
	}
	b.audit("suppressions-import-refused") // the rows' message describes the file's field
	if n := listed(); n != bound {
		t.Fatalf("a refused import left %d numbers on the list, want %d", n, bound)
	}

	add("+14155550101")
	b.waitText("+14155550101 was on the suppression list already.")
}
