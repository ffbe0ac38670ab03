package validate

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// The bounds_*_test.go files test each named bound of this package at its edge and just
// past it. A case names the constant, not a literal, so a change of the bound keeps the
// test true; a bound in characters is tested with a character of two bytes, so a rule that
// counted bytes would refuse the value at the bound.

// bound is one rule at one edge: run checks the input holding the value at the bound
// (past false) or just past it (past true), the rest of the input valid; path is the one
// field the value past the bound must be refused on.
type bound struct {
	name string
	path string
	run  func(past bool) error
}

// checkBounds runs each case: at the bound no fault; past it a validation_failed error
// (conventions §2) with a fault on the case's path and on no other.
func checkBounds(t *testing.T, cases []bound) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.run(false); err != nil {
				t.Fatalf("at the bound: want no fault, got %v", faultsOf(err))
			}
			var e *data.Error
			err := c.run(true)
			if !errors.As(err, &e) || e.Code != data.EINVALID {
				t.Fatalf("past the bound: want a %s error, got %v", data.EINVALID, err)
			}
			if len(e.Fields) != 1 || len(e.Fields[c.path]) == 0 {
				t.Fatalf("past the bound: want exactly a fault on %s, got %v", c.path, faultsOf(err))
			}
		})
	}
}

// faultsOf shows an error by its field faults when it has them, the first few of many.
func faultsOf(err error) any {
	var e *data.Error
	if !errors.As(err, &e) || e.Fields == nil {
		return err
	}
	if paths := e.SortedFieldPaths(); len(paths) > 3 {
		return fmt.Sprintf("%d faults, first %s: %v", len(paths), paths[0], e.Fields[paths[0]])
	}
	return e.Fields
}

// upTo is the count of a maximum's value: n at the bound, n+1 past it.
func upTo(n int, past bool) int {
	if past {
		return n + 1
	}
	return n
}

// downTo is the count of a minimum's value: n at the bound, n-1 past it.
func downTo(n int, past bool) int {
	if past {
		return n - 1
	}
	return n
}

// chars is n characters of two bytes each.
func chars(n int) string { return strings.Repeat("é", n) }

// errsOf runs rules that collect into an Errors and returns their error.
func errsOf(rules func(errs *Errors)) error {
	var errs Errors
	rules(&errs)
	return errs.Err()
}

// agentIDList is n distinct well-formed agent ids.
func agentIDList(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s01JD6%021d", data.PrefixAgent, i)
	}
	return ids
}

// TestBoundHelpers: the helpers build what they promise, so a bound case that passes is
// at the edge it names.
func TestBoundHelpers(t *testing.T) {
	if upTo(5, false) != 5 || upTo(5, true) != 6 || downTo(5, false) != 5 || downTo(5, true) != 4 {
		t.Error("upTo or downTo is off by one")
	}
	if s := chars(3); len([]rune(s)) != 3 || len(s) != 6 {
		t.Errorf("chars(3) = %q: want 3 characters of 2 bytes", s)
	}
	ids := agentIDList(3)
	for _, id := range ids {
		if !data.ValidID(data.PrefixAgent, id) {
			t.Errorf("%s is not an agent id", id)
		}
	}
	if ids[0] == ids[1] {
		t.Error("agentIDList repeats an id")
	}
}

// testNow is the instant rules that compare with now are checked at.
var testNow = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
