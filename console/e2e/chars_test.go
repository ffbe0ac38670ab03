package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/voiceapi/voiceapi/validate"
)

// fieldState is what the browser thinks of a form field: its value's length in code
// points, whether it passes the form's checks, and the message it would show.
type fieldState struct {
	Chars int  `json:"chars"`
	Valid bool `json:"valid"`
	// Mismatch is the pattern's own refusal, which holds without script too.
	Mismatch bool   `json:"mismatch"`
	Message  string `json:"message"`
}

// typeInto empties the field sel and types text into it as a person pasting it would
// (Input.insertText): unlike a value set by script, typed text is what maxlength cuts.
func (b *browser) typeInto(sel, text string) fieldState {
	b.t.Helper()
	b.run("type into "+sel,
		chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q).value = ""`, sel), nil),
		chromedp.Focus(sel, chromedp.ByQuery),
		input.InsertText(text),
	)
	var st fieldState
	b.eval("the state of "+sel, fmt.Sprintf(`(() => { const e = document.querySelector(%q);
		return {chars: [...e.value].length, valid: e.checkValidity(), mismatch: e.validity.patternMismatch, message: e.validationMessage}; })()`, sel), &st)
	return st
}

// submitted reports whether the form sel passes the browser's checks and would be sent:
// requestSubmit fires submit only then, and the spy keeps it from being sent.
func (b *browser) submitted(sel string) bool {
	b.t.Helper()
	var sent bool
	b.eval("submit "+sel, fmt.Sprintf(`(() => { const f = document.querySelector(%q); let sent = false;
		const spy = e => { sent = true; e.preventDefault(); };
		f.addEventListener("submit", spy); f.requestSubmit(); f.removeEventListener("submit", spy); return sent; })()`, sel), &sent)
	return sent
}

// TestFormCountsCharacters: the new-agent form counts a name's characters as the API does
// (code points, not UTF-16 units): 200 emoji are accepted and stored as typed, exactly
// the bound's number of emoji too; one past it, in two-byte letters or emoji, is stopped
// by the browser with the field's message, and nothing is created. The new password's
// minimum counts characters the same way.
func TestFormCountsCharacters(t *testing.T) {
	b := signedIn(t)
	max := validate.MaxAgentName
	stored := func(name string) int { return b.listCount("/api/v1/agents", "name", name) }

	b.open("/agents")
	for _, name := range []string{strings.Repeat("é", max+1), strings.Repeat("😀", max+1)} {
		st := b.typeInto("#new-agent-name", name)
		if st.Chars != max+1 || st.Valid || !st.Mismatch {
			t.Errorf("%d × %q: the field holds %d characters and is valid %v; want all typed, and refused", max+1, []rune(name)[0], st.Chars, st.Valid)
		}
		if want := fmt.Sprintf("At most %d characters: this has %d.", max, max+1); st.Message != want {
			t.Errorf("%d × %q: the browser's message %q, want %q", max+1, []rune(name)[0], st.Message, want)
		}
		if b.submitted("#new-agent") {
			t.Errorf("%d × %q: the form was sent", max+1, []rune(name)[0])
		}
		if n := stored(name); n != 0 {
			t.Fatalf("a name of %d characters refused by the browser was stored %d times", max+1, n)
		}
	}

	for _, name := range []string{strings.Repeat("😀", 200), strings.Repeat("😀", max)} {
		b.open("/agents")
		if st := b.typeInto("#new-agent-name", name); !st.Valid || st.Chars != len([]rune(name)) {
			t.Errorf("%d emoji (%d UTF-16 units): the field holds %d characters, valid %v (%q)", len([]rune(name)), 2*len([]rune(name)), st.Chars, st.Valid, st.Message)
		}
		b.submit("#new-agent-name")
		b.waitText("Agent created.")
		if n := stored(name); n != 1 {
			t.Errorf("%d emoji: the API lists the name %d times, want once as typed", len([]rune(name)), n)
		}
	}

	// Without script the pattern alone refuses, and the field's title states the bound
	// (Chromium shows it under its own message).
	b.run("script off", emulation.SetScriptExecutionDisabled(true))
	b.open("/agents")
	st := b.typeInto("#new-agent-name", strings.Repeat("😀", max+1))
	if st.Valid || !st.Mismatch {
		t.Errorf("without script, %d emoji: valid %v, pattern mismatch %v", max+1, st.Valid, st.Mismatch)
	}
	if strings.Contains(st.Message, "this has") {
		t.Errorf("the console's script ran with script off: %q", st.Message)
	}
	var title string
	b.eval("the title", `document.querySelector("#new-agent-name").title`, &title)
	if want := fmt.Sprintf("At most %d characters", max); title != want {
		t.Errorf("the field's title %q, want %q", title, want)
	}
	b.run("script on", emulation.SetScriptExecutionDisabled(false))

	b.open("/account")
	minimum := validate.MinPasswordLen
	short := "ab" + strings.Repeat("😀", minimum-3) // more UTF-16 units than the minimum, fewer characters
	if st := b.typeInto("#pw-new", short); st.Valid || !st.Mismatch || !strings.Contains(st.Message, "At least "+strconv.Itoa(minimum)+" characters") {
		t.Errorf("a password of %d characters (%d UTF-16 units): valid %v, message %q", minimum-1, 2*minimum-4, st.Valid, st.Message)
	}
	if st := b.typeInto("#pw-new", short+"😀"); !st.Valid {
		t.Errorf("a password of %d characters refused: %q", minimum, st.Message)
	}
}
