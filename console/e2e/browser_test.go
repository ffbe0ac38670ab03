// Package e2e drives the console in a real headless Chromium (Debian's chromium package)
// against a real server on a real database.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// browser is one headless Chromium tab on a test's server.
type browser struct {
	t   *testing.T
	ctx context.Context // the tab, bounded by the test's time limit
	tab context.Context // the tab without the limit, for the failure screenshot
	env *testenv.Env
}

// chromiumPath finds Debian's chromium; without it a test skips, except in CI.
func chromiumPath(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "chromium not found: the browser tests need Debian's chromium package (apt-get install chromium)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// newBrowser opens a tab for t in a fresh browser context of the shared Chromium (its
// own cookies, storage and cache), and starts a server. A failing test leaves a
// screenshot of the page it was on (its path is logged).
func newBrowser(t *testing.T) *browser { return newBrowserWith(t, nil) }

// newBrowserWith is newBrowser on a server whose services prepare readies first
// (testenv.StartWith).
func newBrowserWith(t *testing.T, prepare func(*service.Services)) *browser {
	path := chromiumPath(t)
	env := testenv.StartWith(t, prepare)
	tab, closeTab := newTab(t, path)
	// A generous bound for the whole test: a loaded CI machine is slow, never stuck.
	limit := 3 * time.Minute
	if d, err := time.ParseDuration(os.Getenv("E2E_TIMEOUT")); err == nil {
		limit = d
	}
	ctx, cancelTime := context.WithTimeout(tab, limit)
	b := &browser{t: t, ctx: ctx, tab: tab, env: env}
	t.Cleanup(func() {
		if t.Failed() {
			b.failureShot()
		}
		cancelTime()
		closeTab()
	})
	// The first Run opens the tab, tied to the tab's context rather than the test's time
	// limit, so that a timed-out test can still take its screenshot.
	if err := chromedp.Run(tab); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return b
}

// failureShot saves the page a failed test was on.
func (b *browser) failureShot() {
	var png []byte
	ctx, cancel := context.WithTimeout(b.tab, 10*time.Second) // b.ctx may have run out
	defer cancel()
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		b.t.Logf("no failure screenshot: %v", err)
		return
	}
	dir := os.Getenv("E2E_FAILURES")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "voiceapi-e2e-failures")
	}
	os.MkdirAll(dir, 0o755)
	name := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(b.t.Name())+".png")
	if err := os.WriteFile(name, png, 0o644); err == nil {
		b.t.Logf("failure screenshot: %s", name)
	}
}

// run runs chromedp actions, failing the test on error.
func (b *browser) run(what string, actions ...chromedp.Action) {
	b.t.Helper()
	if err := chromedp.Run(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// open loads path and waits for the page's main landmark.
func (b *browser) open(path string) {
	b.t.Helper()
	b.run("open "+path, chromedp.Navigate(b.env.URL+path), chromedp.WaitReady("#main", chromedp.ByQuery))
}

// text returns the text of the first element sel matches, once it is visible.
func (b *browser) text(sel string) string {
	b.t.Helper()
	var s string
	b.run("read "+sel, chromedp.WaitVisible(sel, chromedp.ByQuery), chromedp.Text(sel, &s, chromedp.ByQuery))
	return s
}

// eval runs a script in the page.
func (b *browser) eval(what, js string, out any) {
	b.t.Helper()
	b.run(what, chromedp.Evaluate(js, out, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
}

// signIn fills the sign-in form.
func (b *browser) signIn(email, password, workspace string) {
	b.t.Helper()
	b.open("/login")
	b.run("sign in",
		chromedp.SendKeys("#email", email, chromedp.ByQuery),
		chromedp.SendKeys("#password", password, chromedp.ByQuery),
		chromedp.SendKeys("#workspace_id", workspace, chromedp.ByQuery),
		chromedp.Click(`button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`form.signout button`, chromedp.ByQuery),
	)
}

// setSelect chooses a value in a select as a user would, firing its change event.
func (b *browser) setSelect(sel, value string) {
	b.t.Helper()
	b.run("choose "+value+" in "+sel, chromedp.SetValue(sel, value, chromedp.ByQuery),
		chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q).dispatchEvent(new Event("change", {bubbles: true}))`, sel), nil))
}

var axeSource = func() string {
	b, err := os.ReadFile(filepath.Join("testdata", "axe.min.js"))
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// auditWidths are the widths below the desktop's at which audit checks every page: the
// narrowest common phone, the common phone and a tablet held upright.
var auditWidths = []int{375, 390, 768}

// audit runs axe-core on the current page, its target-size rule (off by default) among
// the others, and fails on any serious or critical violation; then, at each of
// auditWidths, checks that nothing overflows sideways, that no control is too small to
// tap and that consistencyRules hold. With CONSOLE_SCREENSHOTS naming a directory it
// saves the whole page there at 1280 px and at each of those widths.
func (b *browser) audit(page string) {
	b.t.Helper()
	b.screenshot(page, 1280)
	var injected bool
	b.eval("inject axe", axeSource+";true", &injected)
	var found string
	b.eval("run axe", `axe.run(document, {resultTypes: ["violations"], rules: {"target-size": {enabled: true}}}).then(r => JSON.stringify({passes: r.passes.length,
		violations: r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map(n => n.target.join(" "))}))}))`, &found)
	var res struct {
		Passes     int
		Violations []map[string]any
	}
	if err := json.Unmarshal([]byte(found), &res); err != nil || res.Passes == 0 {
		b.t.Fatalf("%s: axe did not run: %v %q", page, err, found)
	}
	for _, v := range res.Violations {
		if v["impact"] == "serious" || v["impact"] == "critical" {
			b.t.Errorf("%s: axe %s (%s): %s at %v", page, v["id"], v["impact"], v["help"], v["nodes"])
		} else {
			b.t.Logf("%s: axe %s (%s): %s", page, v["id"], v["impact"], v["help"])
		}
	}
	for _, w := range auditWidths {
		b.atWidth(page, w)
	}
	b.shot(page)
	b.run("desktop", chromedp.EmulateViewport(1280, 900))
}

// atWidth makes the viewport width px wide and checks there that nothing scrolls
// sideways and that consistencyRules hold.
func (b *browser) atWidth(page string, width int) {
	b.t.Helper()
	b.run(fmt.Sprintf("%d px", width), chromedp.EmulateViewport(int64(width), 800))
	var overflow int
	b.eval("overflow", `document.documentElement.scrollWidth - document.documentElement.clientWidth`, &overflow)
	if overflow > 0 {
		var wide string
		b.eval("wide elements", `Array.from(document.querySelectorAll("body, body *")).filter(e => e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().right > document.documentElement.clientWidth + 1).slice(0, 8).map(e => e.tagName + "." + e.className + "#" + e.id + ":" + e.scrollWidth + "/" + e.clientWidth + "/" + getComputedStyle(e).overflowX).join(" ")`, &wide)
		b.t.Errorf("%s: at %d px wide the page scrolls sideways by %d px: %s", page, width, overflow, wide)
	}
	b.screenshot(page, width)
	b.consistent(page, width)
	b.targetSizes(page, width)
}

// targetSizes runs axe-core's target-size rule (WCAG 2.5.8: a control at least 24 px
// square, or that far from the next), off by default, at the viewport's width.
func (b *browser) targetSizes(page string, width int) {
	b.t.Helper()
	var found string
	b.eval("run axe target-size", `axe.run(document, {runOnly: ["target-size"]}).then(r => JSON.stringify(r.violations.map(v => v.nodes.slice(0, 5).map(n => n.target.join(" ") + " " + n.failureSummary.replace(/\s+/g, " ").slice(0, 160)))))`, &found)
	if found != "[]" {
		b.t.Errorf("%s at %d px: controls too small to tap: %s", page, width, found)
	}
}

// consistencyRules are the console's house style, checked on every audited page; each
// returns what breaks it:
//   - a definition list's term is set apart from its value (on a phone they stack);
//   - a badge reads in words ("Failed"), not as the API's code ("failed", "not_run");
//   - an action that leads to a confirmation of loss, outside a table's row, is a button
//     ("Delete this agent…"), as on every record's page;
//   - at the width it runs at (a phone's), no text is drawn smaller than 10 px, a chart's
//     (SVG, scaled to its box) among them; and a time series too wide for its box opens
//     on its latest time (its right end in view);
//   - no count written with "(s)": "1 case", "3 cases";
//   - on a phone or a tablet (768 px) the header stays compact, two lines (at most 112
//     px tall, where its sections wrapped to about 160 on a phone and 120 at 768) with
//     the current section's link in view;
//   - a hint or a message says in words, without the API's error code after it
//     ("… refuses the call start (missing_variables)");
//   - no table cell squeezed so narrow that its words break letter by letter (a diff's
//     field path did), and in a table shown as cards no part of a value (an event's code
//     under its name) in the column of names;
//   - a field's message describes its field (aria-describedby), which is marked invalid;
//   - an empty list's state leads to the form that adds the first (folded in a details
//     above it, easily missed), as a button;
//   - no table wider than its box, its last columns behind a sideways scroll (the calls
//     list's at 768 px);
//   - a time series' y axis stays in view beside the part of the chart shown, and every
//     label and count of another chart is in view;
//   - no module named by its API code (call_history) in the page's prose, outside code;
//   - no network error shown by its resolver's internals ("dial tcp: lookup x on
//     127.0.0.53:53"): a summary in words leads, the raw text one click away.
var consistencyRules = `((moduleCodes) => {
	const bad = [];
	const upToTablet = window.innerWidth <= 800;
	const header = document.querySelector("header.top");
	if (upToTablet && header && header.getBoundingClientRect().height > 112)
		bad.push("the header is " + Math.round(header.getBoundingClientRect().height) + " px tall at " + window.innerWidth + " px");
	const cur = document.querySelector('header.top nav [aria-current="page"]');
	if (upToTablet && cur) {
		const n = cur.closest("nav").getBoundingClientRect(), r = cur.getBoundingClientRect();
		if (r.left < n.left - 1 || r.right > n.right + 1) bad.push("the current section's link " + JSON.stringify(cur.textContent.trim()) + " is out of view");
	}
	for (const c of document.querySelectorAll("th, td")) {
		// Squeezed: its longest word (about 0.6 em a character) needs 2.5 lines of the cell.
		const r = c.getBoundingClientRect(), st = getComputedStyle(c);
		const word = c.textContent.split(/\s+/).reduce((a, w) => w.length > a.length ? w : a, "");
		const inner = r.width - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight);
		if (r.height && word.length >= 8 && inner * 2.5 < word.length * 0.6 * parseFloat(st.fontSize))
			bad.push("the cell " + JSON.stringify(word.slice(0, 30)) + " is squeezed to " + Math.round(r.width) + " px: its words break letter by letter");
	}
	for (const p of document.querySelectorAll("main .err:not([role=alert])")) {
		// A field's message is its field's description, the field marked invalid.
		if (!p.checkVisibility() || !p.textContent.trim()) continue;
		const field = p.id && [...document.querySelectorAll("[aria-describedby]")].find(f => f.getAttribute("aria-describedby").split(/\s+/).includes(p.id));
		if (!field || (field.matches("input, select, textarea") && field.getAttribute("aria-invalid") !== "true")) {
			bad.push("the message " + JSON.stringify(p.textContent.trim().slice(0, 60)) + " is not tied to its field (aria-describedby, aria-invalid)");
			break;
		}
	}
	const empty = document.querySelector("main .empty"), forms = [...document.querySelectorAll("main details.create[id]:not([open])")];
	if (empty && forms.length && !forms.some(d => empty.querySelector('a[href="#' + d.id + '"]')))
		bad.push("the empty state does not lead to the form folded above it, " + JSON.stringify(forms[0].querySelector("summary").textContent.trim()));
	for (const w of document.querySelectorAll(".table-wrap")) {
		// A table wider than its box hides its last columns behind a sideways scroll.
		if (w.scrollWidth > w.clientWidth + 1 && w.checkVisibility()) {
			const cols = [...w.querySelectorAll("thead th")].map(th => th.textContent.trim()).join(", ");
			bad.push("a table (" + cols.slice(0, 60) + ") scrolls sideways in its box by " + (w.scrollWidth - w.clientWidth) + " px");
			break;
		}
	}
	for (const td of document.querySelectorAll("table.cards td[data-label]")) {
		// A card's value, all of it, right of its column's name (where rows are cards); an
		// opened details (a form) takes the card's width by design.
		if (getComputedStyle(td).display !== "grid") continue;
		const names = td.getBoundingClientRect().left + parseFloat(getComputedStyle(td).gridTemplateColumns);
		const astray = [...td.children].find(e => !e.matches("details[open]") && e.getBoundingClientRect().width && e.getBoundingClientRect().left < names - 1);
		if (astray) {
			bad.push("in the card's " + JSON.stringify(td.dataset.label) + ", " + JSON.stringify(astray.textContent.trim().slice(0, 30)) + " sits in the column of names");
			break;
		}
	}
	for (const fig of document.querySelectorAll("figure.chart-box")) {
		// A time series' y axis; every text of another chart (bars' labels and counts).
		const series = fig.querySelector("svg.series"), box = fig.getBoundingClientRect();
		for (const t of fig.querySelectorAll(series ? 'svg text[text-anchor="end"]' : "svg text")) {
			const r = t.getBoundingClientRect();
			if (r.left < box.left - 1 || r.right > box.right + 1) {
				bad.push((series ? "the y axis of the chart " : "a label of the chart ") + JSON.stringify(fig.querySelector("figcaption").textContent) + " is out of view");
				break;
			}
		}
	}
	const codes = new RegExp("\\b(" + moduleCodes.join("|") + ")\\b");
	const walk = document.createTreeWalker(document.querySelector("main") || document.body, NodeFilter.SHOW_TEXT);
	const internals = /\bdial (tcp|udp)\b|\blookup \S+ on \S+:53\b/;
	const errorCode = /\(\s*[a-z]+(_[a-z]+)+\s*\)/;
	let named = false, raw = false, coded = false;
	for (let n; (n = walk.nextNode());) {
		const m = n.textContent.match(codes);
		if (!named && m && !n.parentElement.closest("code, pre, kbd, samp, textarea, script, style, [hidden]")) {
			bad.push("the module " + m[1] + " is named by its code: " + JSON.stringify(n.textContent.trim().slice(0, 80)));
			named = true;
		}
		if (!raw && internals.test(n.textContent) && n.parentElement.checkVisibility()) {
			bad.push("a network error shows the resolver's internals: " + JSON.stringify(n.textContent.trim().slice(0, 80)));
			raw = true;
		}
		if (!coded && errorCode.test(n.textContent) && n.parentElement.checkVisibility() && !n.parentElement.closest("code, pre, kbd, samp, textarea, script, style")) {
			bad.push("a text shows an API code after its words: " + JSON.stringify(n.textContent.trim().slice(0, 100)));
			coded = true;
		}
	}
	for (const dt of document.querySelectorAll("dl dt")) {
		const dd = dt.nextElementSibling;
		if (!dd || dd.tagName !== "DD") continue;
		const a = getComputedStyle(dt), b = getComputedStyle(dd);
		if (a.fontWeight === b.fontWeight && a.color === b.color && a.fontSize === b.fontSize)
			bad.push("the term " + JSON.stringify(dt.textContent.trim()) + " looks like its value");
	}
	for (const s of document.querySelectorAll(".badge")) {
		const t = s.textContent.trim();
		if (t && (!/^[A-Z0-9]/.test(t) || t.includes("_"))) bad.push("the badge " + JSON.stringify(t) + " is not in words");
	}
	for (const a of document.querySelectorAll("a.danger:not(.button)"))
		if (!a.closest("table")) bad.push("the action " + JSON.stringify(a.textContent.trim()) + " is a link, not a button");
	const small = new Set();
	for (const el of document.querySelectorAll("body *")) {
		if (![...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
		const r = el.getBoundingClientRect();
		if (!r.height) continue; // not drawn
		const px = el instanceof SVGElement ? r.height / 1.15 : parseFloat(getComputedStyle(el).fontSize);
		if (px < 10) small.add(el.textContent.trim().slice(0, 30));
	}
	if (small.size) bad.push("text drawn smaller than 10 px: " + JSON.stringify([...small].slice(0, 5)));
	const plurals = (document.querySelector("main") || document.body).innerText.match(/\w+\(s\)/g);
	if (plurals) bad.push("counts written with (s): " + JSON.stringify(plurals));
	for (const svg of document.querySelectorAll("svg.series")) {
		const box = svg.parentElement.getBoundingClientRect(), r = svg.getBoundingClientRect();
		if (r.right > box.right + 1) bad.push("the chart " + JSON.stringify(svg.getAttribute("aria-label")) + " opens on its oldest time, its latest out of view");
	}
	return bad;
})(` + moduleCodesJSON() + `)`

// moduleCodesJSON lists the modules whose API code is not a word of prose (call_history,
// not agents), as a JSON array for consistencyRules.
func moduleCodesJSON() string {
	var codes []string
	for _, m := range data.Modules {
		if strings.Contains(m, "_") {
			codes = append(codes, m)
		}
	}
	b, _ := json.Marshal(codes)
	return string(b)
}

// consistent fails the test for each consistencyRules break on the current page, as
// wide as the viewport now is (width names it).
func (b *browser) consistent(page string, width int) {
	b.t.Helper()
	// The page has seen the viewport's new width (its resize handlers ran) before it is
	// judged at it.
	b.eval("a frame", `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`, nil)
	var bad []string
	b.eval("consistency", consistencyRules, &bad)
	for _, s := range bad {
		b.t.Errorf("%s at %d px: %s", page, width, s)
	}
}

// screenshot saves the whole page, as wide as the viewport now is (width names it), as
// $CONSOLE_SCREENSHOTS/<page>-<width>.png; nothing without the variable.
func (b *browser) screenshot(page string, width int) {
	dir := os.Getenv("CONSOLE_SCREENSHOTS")
	if dir == "" {
		return
	}
	b.t.Helper()
	// The viewport made as tall as the page, so that what sticks to the viewport's bottom
	// (the editor's Save bar) is drawn where a reader scrolled to the end would see it.
	var height int64
	b.eval("page height", `document.documentElement.scrollHeight`, &height)
	var png []byte
	b.run("screenshot "+page, chromedp.EmulateViewport(int64(width), height), chromedp.CaptureScreenshot(&png))
	b.run("viewport back", chromedp.EmulateViewport(int64(width), 900))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.png", page, width)), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// docsPages are the pages docs/dashboard.md shows.
var docsPages = map[string]bool{
	"login": true, "home": true, "agents": true, "agent-errors": true, "versions": true, "diff": true, "restore": true,
	"knowledge-bases": true, "knowledge-base": true, "knowledge-base-delete": true, "numbers": true, "number": true,
	"calls": true, "call": true, "analytics": true, "webhooks": true, "webhook": true, "api-keys": true,
	"workspace": true, "privacy": true, "audit": true, "account": true, "users": true, "test-run": true,
}

// shot saves a screenshot of a page of docsPages for docs/dashboard.md when
// DOCS_SCREENSHOTS names a directory (the docs are refreshed with
// DOCS_SCREENSHOTS=$PWD/docs/img go test ./console/e2e -run 'AgentJourney|Screenshots|TestsTab').
func (b *browser) shot(page string) {
	dir := os.Getenv("DOCS_SCREENSHOTS")
	if dir == "" || !docsPages[page] {
		return
	}
	b.t.Helper()
	var png []byte
	b.run("docs screenshot", chromedp.EmulateViewport(960, 640), chromedp.CaptureScreenshot(&png))
	if err := os.WriteFile(filepath.Join(dir, "console-"+page+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}
