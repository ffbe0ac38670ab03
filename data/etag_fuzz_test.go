package data_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// ifMatchGrammar is RFC 9110's If-Match = "*" / #entity-tag as a regular expression, over a
// value whose bytes 0x80 to 0xFF (obs-text, allowed in a tag) were first written as "~":
// the list may hold empty elements, its elements and the whole value optional white space.
var (
	ifMatchGrammar = regexp.MustCompile(`^[ \t]*(\*|((W/)?"[\x21\x23-\x7E]*")?([ \t]*,[ \t]*((W/)?"[\x21\x23-\x7E]*")?)*)[ \t]*$`)
	listedTag      = regexp.MustCompile(`(W/)?"[^"]*"`)
)

// FuzzIfMatch checks any If-Match value against a record (each "@" in the value replaced
// by the inside of the record's current ETag, so that matches are found). Property: the
// write proceeds iff the value is empty, or "*" alone, or a list by RFC 9110's grammar of
// which one entity-tag is the current ETag under strong comparison (no W/); otherwise it
// is precondition_failed with the ETag in its message, and the answer is the same twice.
func FuzzIfMatch(f *testing.F) {
	f.Add(`"@"`, "a")
	f.Add(` "x", "@" `, "a")
	f.Add(`W/"@"`, "a")
	f.Add(`*`, "b")
	f.Add(`*, "@"`, "b")
	f.Add(`"x,"@""`, "c")
	f.Add(`"@" "x"`, "c")
	f.Add(`,, "@",`, "d")
	f.Add("\v\"@\"", "d")
	f.Add(`"@`, "e")
	f.Add("\"\x80\", \"@\"", "e")
	f.Fuzz(func(t *testing.T, header, name string) {
		rec := map[string]string{"name": name}
		etag := data.ETagOf(rec)
		header = strings.ReplaceAll(header, "@", strings.Trim(etag, `"`))
		want := header == "" || oracleIfMatch(header, etag)
		err := data.CheckIfMatch(header, rec)
		if (err == nil) != want {
			t.Fatalf("If-Match %q against %s: error %v, want it to hold: %v", header, etag, err, want)
		}
		if err != nil && (data.ErrorCode(err) != data.EPRECONDITION || !strings.Contains(data.ErrorMessage(err), etag)) {
			t.Fatalf("If-Match %q refused with %s %q", header, data.ErrorCode(err), data.ErrorMessage(err))
		}
		if again := data.CheckIfMatch(header, rec); (again == nil) != (err == nil) {
			t.Fatalf("If-Match %q: %v, then %v", header, err, again)
		}
	})
}

// oracleIfMatch reads header with the grammar above and compares its strong tags.
func oracleIfMatch(header, etag string) bool {
	ascii := strings.Map(func(r rune) rune {
		if r >= 0x80 {
			return '~'
		}
		return r
	}, header)
	if !ifMatchGrammar.MatchString(ascii) {
		return false
	}
	if strings.Trim(ascii, " \t") == "*" {
		return true
	}
	for _, tag := range listedTag.FindAllString(ascii, -1) {
		if tag == etag {
			return true
		}
	}
	return false
}
