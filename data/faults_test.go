package data

import (
	"fmt"
	"strings"
	"testing"
)

// A validation error keeps the first MaxFaults messages in the order found and counts
// the rest: its message keeps the true total, its fields the kept paths.
func TestFaultsKeepTheFirstMaxFaults(t *testing.T) {
	for _, c := range []struct {
		faults, kept int
	}{
		{1, 1},
		{MaxFaults - 1, MaxFaults - 1},
		{MaxFaults, MaxFaults},
		{MaxFaults + 1, MaxFaults},
		{3 * MaxFaults, MaxFaults},
	} {
		var f Faults
		for i := range c.faults {
			f.Add(fmt.Sprint("f.", i), fmt.Sprint("fault ", i))
		}
		e := f.Err().(*Error)
		if len(e.Fields) != c.kept || len(e.FieldPaths()) != c.kept || e.Omitted() != c.faults-c.kept {
			t.Errorf("%d faults: %d kept (%d paths), %d counted; want %d kept", c.faults, len(e.Fields), len(e.FieldPaths()), e.Omitted(), c.kept)
		}
		if last := fmt.Sprint("f.", c.kept-1); e.FieldPaths()[c.kept-1] != last {
			t.Errorf("%d faults: last kept %s, want %s in the order found", c.faults, e.FieldPaths()[c.kept-1], last)
		}
		want := "fault 0"
		if c.faults > 1 {
			want = fmt.Sprintf("fault 0 (and %s more error%s)", Thousands(c.faults-1), plural(c.faults-1))
		}
		if e.Message != want {
			t.Errorf("%d faults: message %q, want %q", c.faults, e.Message, want)
		}
	}
}

// Messages on a path already kept count against the bound too: a body naming one member
// a million times holds no more than one naming a million members.
func TestFaultsBoundMessagesOnOnePath(t *testing.T) {
	var f Faults
	for range MaxFaults + 5 {
		f.Add("name", "The name field is given more than once.")
	}
	if n := len(f.Messages("name")); n != MaxFaults || f.Omitted() != 5 {
		t.Errorf("%d messages kept, %d counted; want %d and 5", n, f.Omitted(), MaxFaults)
	}
}

// A collector made of another's error carries its uncounted faults into the total.
func TestFaultsAddErrorCarriesTheCount(t *testing.T) {
	var first Faults
	for i := range MaxFaults + 7 {
		first.Add(fmt.Sprint("f.", i), "bad")
	}
	var next Faults
	next.Add("query.per_page", "bad page")
	next.AddError(first.Err().(*Error))
	e := next.Err().(*Error)
	if want := fmt.Sprintf("bad page (and %s more errors)", Thousands(MaxFaults+7)); e.Message != want || len(e.Fields) != MaxFaults {
		t.Errorf("message %q with %d fields, want %q with %d", e.Message, len(e.Fields), want, MaxFaults)
	}
}

// BenchmarkFaultsPastTheBound: a million faults, as a hostile body gives; memory stays
// that of MaxFaults (docs/performance.md, "Hostile bodies").
func BenchmarkFaultsPastTheBound(b *testing.B) {
	paths := make([]string, 1_000_000)
	for i := range paths {
		paths[i] = fmt.Sprint("unknown_", i)
	}
	b.ReportAllocs()
	for b.Loop() {
		var f Faults
		for _, p := range paths {
			f.Add(p, "The field is not a known field.")
		}
		_ = f.Err()
	}
}

// Thousands groups digits as the docs do, negative numbers too.
func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 5000: "5,000", 123456: "123,456", 1234567: "1,234,567", -5000: "-5,000", -999: "-999"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// A validation error's total of other faults is written as the rest of the API's prose
// writes numbers, grouped by commas from a thousand on, at the edges of the grouping and
// of the kept faults.
func TestFaultTotalsGroupDigits(t *testing.T) {
	for _, c := range []struct {
		faults int
		want   string
	}{
		{1, "fault 0"},
		{2, "fault 0 (and 1 more error)"},
		{1000, "fault 0 (and 999 more errors)"},
		{1001, "fault 0 (and 1,000 more errors)"},
		{543706, "fault 0 (and 543,705 more errors)"},
		{1000001, "fault 0 (and 1,000,000 more errors)"},
	} {
		var f Faults
		for i := range c.faults {
			f.Add(fmt.Sprint("f.", i), fmt.Sprint("fault ", i))
		}
		if got := f.Err().(*Error).Message; got != c.want {
			t.Errorf("%d faults: %q, want %q", c.faults, got, c.want)
		}
	}
}

// MissingVariables holds no more than MaxFaults names, in its fields and its message,
// whatever the configuration names: the rest are counted.
func TestMissingVariablesWithinTheFaultBound(t *testing.T) {
	for _, n := range []int{1, MaxFaults - 1, MaxFaults, MaxFaults + 1, 20000} {
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("v%05d", i)
		}
		e := MissingVariables(names)
		kept := min(n, MaxFaults)
		if len(e.Fields) != kept || len(e.FieldPaths()) != kept || e.Omitted() != n-kept {
			t.Errorf("%d names: %d fields, %d counted; want %d kept", n, len(e.Fields), e.Omitted(), kept)
		}
		if last := "variables." + names[kept-1]; e.FieldPaths()[kept-1] != last {
			t.Errorf("%d names: last kept %s, want %s", n, e.FieldPaths()[kept-1], last)
		}
		more := " and " + Thousands(n-kept) + " more."
		if n > kept && (!strings.Contains(e.Message, names[kept-1]+more) || strings.Contains(e.Message, names[kept])) {
			t.Errorf("%d names: the message names more than the kept ones, or does not count the rest: …%s", n, e.Message[max(len(e.Message)-200, 0):])
		}
		if n == kept && (!strings.Contains(e.Message, names[n-1]+". Give") || strings.Contains(e.Message, " more.")) {
			t.Errorf("%d names: the message does not name them all: …%s", n, e.Message[max(len(e.Message)-200, 0):])
		}
	}
}
