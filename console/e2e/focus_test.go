package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// focusDrawn says what is wrong with how the focused element shows its focus, "" when it
// is drawn: its outline (the console's focus ring) at least 2 px wide, and not cut off
// by a box that scrolls or clips around it (more than half of the ring's width hidden on
// a side). The page's own scrolling (the viewport) is no such box.
var focusDrawn = `(() => {
	const el = document.activeElement;
	if (!el || el === document.body) return "";
	const name = el.tagName.toLowerCase() + " " + JSON.stringify((el.textContent || el.name || el.id || "").trim().slice(0, 30));
	const st = getComputedStyle(el);
	const width = parseFloat(st.outlineWidth) || 0;
	if (st.outlineStyle === "none" || width < 2) return name + ": no focus ring";
	const reach = width + Math.max(0, parseFloat(st.outlineOffset) || 0);
	const r = el.getBoundingClientRect();
	for (let a = el.parentElement; a && a !== document.body && a !== document.documentElement; a = a.parentElement) {
		const s = getComputedStyle(a);
		if (s.overflowX === "visible" && s.overflowY === "visible") continue;
		const b = a.getBoundingClientRect();
		const cut = Math.max(b.top - (r.top - reach), (r.bottom + reach) - b.bottom, b.left - (r.left - reach), (r.right + reach) - b.right);
		if (cut > reach / 2) return name + ": its focus ring is cut off by " + a.tagName.toLowerCase() + "." + a.className + " (" + Math.round(cut) + " px of " + reach + ")";
	}
	return "";
})()`

// TestFocusVisible: on a page of each kind (a list with filters and a table of links, a
// record with its actions, a form of many boxes, the agent editor), at a phone's and a
// tablet's width and the desktop's, every element the Tab key reaches shows its focus
// ring, whole: the header's sections on a phone scroll sideways in a box that cut the
// ring off above and below.
func TestFocusVisible(t *testing.T) {
	b := signedIn(t)
	s := seed(t, b)
	for _, path := range []string{"/jobs", "/campaigns/" + s.Campaign, "/webhooks/" + s.Webhook, "/api-keys", "/agents/" + s.Agent + "/tests"} {
		for _, w := range []int{390, 768, 1280} {
			b.run(fmt.Sprintf("%d px", w), chromedp.EmulateViewport(int64(w), 800))
			b.open(path)
			seen := map[string]bool{}
			var faults []string
			for i := 0; i < 400; i++ {
				b.run("tab", chromedp.KeyEvent(kb.Tab))
				var at string
				b.eval("focused", `(e => e === document.body ? "" : e.tagName + "#" + e.id + ":" + (e.name || "") + ":" + e.textContent.trim().slice(0, 20) + ":" + Math.round(e.getBoundingClientRect().top + scrollY))(document.activeElement)`, &at)
				if at == "" || seen[at] {
					break // round the page, back to its start
				}
				seen[at] = true
				var fault string
				b.eval("a frame", `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`, nil)
				b.eval("focus drawn", focusDrawn, &fault)
				if fault != "" && len(faults) < 5 {
					faults = append(faults, fault)
				}
			}
			if len(seen) < 3 {
				t.Errorf("%s at %d px: the Tab key reached %d elements", path, w, len(seen))
			}
			if len(faults) > 0 {
				t.Errorf("%s at %d px: focus not visible: %s", path, w, strings.Join(faults, "; "))
			}
		}
	}
}
