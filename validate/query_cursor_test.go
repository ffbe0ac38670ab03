package validate_test

import (
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pagecursor"
	"github.com/voiceapi/voiceapi/validate"
)

// TestPageCursorForm: a cursor is refused before a list is read only for its form; one
// of another list or key has the form, and storage refuses it as it reads the page.
func TestPageCursorForm(t *testing.T) {
	key := make([]byte, 32)
	good := *pagecursor.Encode(key, pagecursor.Older, "agents_by_ws\x00ws_1", "agt_1")
	foreign := *pagecursor.Encode([]byte("another key"), pagecursor.Older, "calls\x00ws_2", "call_1")
	for _, c := range []struct {
		cursor string
		fault  bool
	}{
		{"", false},
		{good, false},
		{foreign, false},
		{good[:len(good)-1], true}, // one character short: the MAC cut
		{good + "A", true},
		{"bm90LWEtY3Vyc29y", true}, // "not-a-cursor": too short for a MAC
		{good + "=", true},         // padded
		{"!!", true},
	} {
		err := validate.PageCursorForm(c.cursor)
		if got := err != nil; got != c.fault {
			t.Errorf("PageCursorForm(%q) = %v, want a fault: %v", c.cursor, err, c.fault)
			continue
		}
		if e, _ := err.(*data.Error); err != nil && (e == nil || e.Fields["cursor"] == nil) {
			t.Errorf("PageCursorForm(%q) = %v, want a fault on cursor", c.cursor, err)
		}
	}
}
