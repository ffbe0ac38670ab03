package console

import (
	"io/fs"
	"regexp"
	"testing"
)

// TestFormBoundsComeFromValidate: no template states a length or number bound as a
// literal (it would drift from the API's), and every bound a template names exists.
func TestFormBoundsComeFromValidate(t *testing.T) {
	literal := regexp.MustCompile(`\b(maxlength|minlength)="\d+"`)
	named := regexp.MustCompile(`\{\{bound "([A-Za-z]+)"\}\}`)
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
		for _, m := range literal.FindAll(b, -1) {
			t.Errorf("%s: %s is a literal; use {{bound \"Max…\"}} so the form reads validate's constant", n, m)
		}
		for _, m := range named.FindAllSubmatch(b, -1) {
			uses++
			if _, err := formBound(string(m[1])); err != nil {
				t.Errorf("%s: %v", n, err)
			}
		}
	}
	if uses < len(formBounds) {
		t.Errorf("the templates name %d bounds, fewer than formBounds holds (%d): drop the unused", uses, len(formBounds))
	}
	if _, err := formBound("MaxNoSuchThing"); err == nil {
		t.Error("an unknown bound rendered")
	}
}
