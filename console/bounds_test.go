package console

import (
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// TestFormBoundsComeFromValidate: no template states a length or number bound as a
// literal (it would drift from the API's), no length is stated in UTF-16 units but a
// bound in bytes, and every bound a template names exists.
func TestFormBoundsComeFromValidate(t *testing.T) {
	lengthAttr := regexp.MustCompile(`\b(maxlength|minlength)="(\{\{[^}]*\}\}|[^"]*)"`)
	bytesBound := regexp.MustCompile(`^\{\{bound "Max[A-Za-z]+Bytes"\}\}$`)
	literalPattern := regexp.MustCompile(`\bpattern="[^"]*\{\d+(,\d*)?\}[^"]*"`)
	named := regexp.MustCompile(`\{\{(bound|textRule) "([A-Za-z]+)"\}\}`)
	names, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		t.Fatal(err)
	}
	uses := 0
	for _, n := range names {
		b, err := fs.ReadFile(files, n)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range lengthAttr.FindAllSubmatch(b, -1) {
			if !bytesBound.Match(m[2]) {
				t.Errorf("%s: %s counts UTF-16 units; state a length in characters as {{textRule \"Max…\"}}, read from validate", n, m[0])
			}
		}
		for _, m := range literalPattern.FindAll(b, -1) {
			t.Errorf("%s: %s states a bound as a literal; use {{textRule \"…\"}} so the form reads validate's", n, m)
		}
		for _, m := range named.FindAllSubmatch(b, -1) {
			uses++
			check := func(name string) error { _, err := formBound(name); return err }
			if string(m[1]) == "textRule" {
				check = func(name string) error { _, _, err := textPattern(name); return err }
			}
			if err := check(string(m[2])); err != nil {
				t.Errorf("%s: %v", n, err)
			}
		}
	}
	if want := len(formBounds) + len(textBounds) + len(textShapes); uses < want {
		t.Errorf("the templates name %d bounds, fewer than formBounds, textBounds and textShapes hold (%d): drop the unused", uses, want)
	}
	for _, bad := range []string{"MaxNoSuchThing", "MaxRedactionPatternBytes"} {
		if _, err := textRule(bad); err == nil {
			t.Errorf("textRule %q rendered", bad)
		}
	}
	if _, err := formBound("MaxNoSuchThing"); err == nil {
		t.Error("an unknown bound rendered")
	}
}

// htmlPattern compiles the pattern of the rule named name as the browser applies it: to
// the whole value. Go's regexp matches runes as HTML's v flag matches code points; it
// repeats at most 1000 times (a browser far more), so a longer bound returns nil.
func htmlPattern(t *testing.T, name string) (*regexp.Regexp, string) {
	t.Helper()
	p, title, err := textPattern(name)
	if err != nil {
		t.Fatal(err)
	}
	if title == "" {
		t.Fatalf("%s has no title: the browser would refuse the field without saying why", name)
	}
	re, err := regexp.Compile(`^(?:` + p + `)$`)
	if err != nil && !strings.Contains(err.Error(), "invalid repeat count") {
		t.Fatalf("%s: %v", name, err)
	}
	return re, p
}

// TestTextRuleCountsCharacters: a textRule bound takes exactly validate's number of
// characters whatever their width (ASCII, two-byte, emoji, a line separator) and refuses
// one past it; its title states the number.
func TestTextRuleCountsCharacters(t *testing.T) {
	widths := []string{"a", "é", "😀", "\u2028"}
	for name, n := range textBounds {
		re, p := htmlPattern(t, name)
		_, title, _ := textPattern(name)
		if !strings.Contains(title, " "+strconv.Itoa(n)+" characters") {
			t.Errorf("%s: the title %q does not state %d characters", name, title, n)
		}
		if re == nil { // past Go's repeat count: the same shape as the bounds tested here
			if want := anyChar + "{0," + strconv.Itoa(n) + "}"; p != want {
				t.Errorf("%s: pattern %q, want %q", name, p, want)
			}
			continue
		}
		for _, c := range widths {
			at, under, over := strings.Repeat(c, n), strings.Repeat(c, n-1), strings.Repeat(c, n+1)
			if !re.MatchString(at) {
				t.Errorf("%s: %d × %q refused, the API takes it", name, n, c)
			}
			if max := strings.HasPrefix(name, "Max"); re.MatchString(over) == max || re.MatchString(under) != max {
				t.Errorf("%s with %q: one past the bound is not refused, or the side within it is", name, c)
			}
		}
	}
}

// TestTextShapesAgreeWithValidate: each shape's pattern takes and refuses the same
// values as validate's rule, at the length's edge and on each side of its classes.
func TestTextShapesAgreeWithValidate(t *testing.T) {
	max := validate.MaxRedactionRuleName
	names := []string{"a", "card_2", "a" + strings.Repeat("b", max-1), "a" + strings.Repeat("b", max),
		"A", "1a", "_a", "a-b", "a b", "é", "aé", "a😀", "z9_"}
	re, _ := htmlPattern(t, "RedactionRuleName")
	for _, name := range names {
		var errs validate.Errors
		validate.Redaction(&errs, "redaction", data.Redaction{Rules: []data.RedactionRule{{Name: name, Pattern: "x+"}}})
		if api, form := errs.Err() == nil, re.MatchString(name); api != form {
			t.Errorf("rule name %q: the API takes it %v, the form's pattern %v", name, api, form)
		}
	}
}
