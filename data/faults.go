package data

import "strconv"

// MaxFaults bounds the messages one validation error holds. Conventions §2 has every
// fault reported at once, but a body can hold millions (an import of up to 100 MiB of
// unknown members, a suppressions file of bad rows): the list grew to many times the
// body and took minutes to build. 1,000 is far more than a person fixes in one pass,
// and more than any body within the per-item limits honestly yields: a full export
// document's rules give at most a few hundred. Beyond it faults are counted, not kept.
const MaxFaults = 1000

// Faults collects validation messages per dot path in the order found, keeping the
// first MaxFaults of them and counting the rest: every collector of field faults
// (validate.Errors, the strict decoder, the query's) is one, so the bound is here alone.
type Faults struct {
	fields  map[string][]string
	order   []string
	kept    int // messages kept, at most MaxFaults
	omitted int // messages found past MaxFaults: counted for the total, not kept
}

// Add records msg for path, or only counts it once MaxFaults messages are kept.
func (f *Faults) Add(path, msg string) {
	if f.kept >= MaxFaults {
		f.omitted++
		return
	}
	if f.fields == nil {
		f.fields = map[string][]string{}
	}
	if _, seen := f.fields[path]; !seen {
		f.order = append(f.order, path)
	}
	f.fields[path] = append(f.fields[path], msg)
	f.kept++
}

// Full reports whether further faults are only counted: a rule can then skip building
// their messages and Omit them. Rules still run to the end, so the total stays exact.
func (f *Faults) Full() bool { return f.kept >= MaxFaults }

// Omit counts n faults found past the bound without their messages.
func (f *Faults) Omit(n int) { f.omitted += n }

// Omitted returns how many faults were counted past the bound and not kept.
func (f *Faults) Omitted() int { return f.omitted }

// Has reports whether path has a kept message.
func (f *Faults) Has(path string) bool { _, ok := f.fields[path]; return ok }

// Len returns the number of failing paths kept.
func (f *Faults) Len() int { return len(f.order) }

// Paths returns the kept paths in the order found (not to be changed).
func (f *Faults) Paths() []string { return f.order }

// Messages returns path's kept messages (not to be changed).
func (f *Faults) Messages(path string) []string { return f.fields[path] }

// AddError adds the faults of e (any validation error, none of any other) in the order
// found, its uncounted ones too.
func (f *Faults) AddError(e *Error) {
	for _, p := range e.FieldPaths() {
		for _, m := range e.Fields[p] {
			f.Add(p, m)
		}
	}
	f.omitted += e.omitted
}

// Err returns nil when nothing failed, else a validation_failed *Error: its message is
// the first fault with a count of all the others, kept or not.
func (f *Faults) Err() error {
	if len(f.order) == 0 {
		return nil
	}
	return invalid(f.fields, f.order, f.omitted)
}

// Omitted returns how many of e's faults were counted past MaxFaults and not kept.
func (e *Error) Omitted() int { return e.omitted }

// Thousands writes n as the docs write numbers, its digits grouped by commas ("5,000"):
// a count in a message ("and 543,705 more errors") or a bound the OpenAPI document
// reads from its constant reads as the prose around it does.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
