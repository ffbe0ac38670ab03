// Package validate turns decoded request bodies into field errors. Every rule collects into
// one Errors value, so a request learns all of its faults at once, each under its dot path.
package validate

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/voiceapi/voiceapi/data"
)

// Errors collects validation messages per dot path, in the order they were found, the
// first data.MaxFaults of them kept and the rest counted (data.Faults: Add, Has, Len, Err).
type Errors struct {
	data.Faults
}

// Addf records a formatted message for path; past the bound it only counts it, without
// formatting (a body of millions of faults costs a count each).
func (e *Errors) Addf(path, format string, args ...any) {
	if e.Full() {
		e.Omit(1)
		return
	}
	e.Add(path, fmt.Sprintf(format, args...))
}

// Join returns "parent.child", or child alone at the top level.
func Join(parent, child string) string {
	if parent == "" {
		return child
	}
	return parent + "." + child
}

// Index returns "parent.i".
func Index(parent string, i int) string { return parent + "." + strconv.Itoa(i) }

// Required records that path is missing.
func (e *Errors) Required(path string) { e.Addf(path, "The %s field is required.", path) }

// RequiredWhen records that path is missing although cond holds, e.g.
// "The llm_config.temperature field is required when llm_config.provider is bedrock_claude."
func (e *Errors) RequiredWhen(path, cond string) {
	e.Addf(path, "The %s field is required when %s.", path, cond)
}

// Prohibited records that path may not be given under cond.
func (e *Errors) Prohibited(path, cond string) {
	e.Addf(path, "The %s field is not allowed when %s.", path, cond)
}

// MaxLen checks a string's length in characters (not bytes).
func (e *Errors) MaxLen(path, s string, max int) {
	if utf8.RuneCountInString(s) > max {
		e.Addf(path, "The %s field must not be greater than %d characters.", path, max)
	}
}

// NotBlank checks that a required string is not empty (required) or only white space
// (blank: it was given, so "required" would mislead), the one message for every blank string.
func (e *Errors) NotBlank(path, s string) {
	switch {
	case s == "":
		e.Required(path)
	case strings.TrimSpace(s) == "":
		e.Addf(path, "The %s field must not be blank.", path)
	}
}

// NotBlankWhen is NotBlank for a string required only when cond holds (RequiredWhen).
func (e *Errors) NotBlankWhen(path, s, cond string) {
	switch {
	case s == "":
		e.RequiredWhen(path, cond)
	case strings.TrimSpace(s) == "":
		e.Addf(path, "The %s field must not be blank.", path)
	}
}

// IntBetween checks min <= v <= max.
func (e *Errors) IntBetween(path string, v, min, max int64) {
	if v < min || v > max {
		e.Addf(path, "The %s field must be between %d and %d.", path, min, max)
	}
}

// IntMin checks v >= min.
func (e *Errors) IntMin(path string, v, min int64) {
	if v < min {
		e.Addf(path, "The %s field must be at least %d.", path, min)
	}
}

// FloatBetween checks min <= v <= max.
func (e *Errors) FloatBetween(path string, v, min, max float64) {
	if v < min || v > max {
		e.Addf(path, "The %s field must be between %s and %s.", path, fmtFloat(min), fmtFloat(max))
	}
}

func fmtFloat(f float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".")
}

// OneOf checks that v is one of allowed.
func (e *Errors) OneOf(path, v string, allowed ...string) {
	for _, a := range allowed {
		if v == a {
			return
		}
	}
	e.Addf(path, "The selected %s is invalid; it must be one of: %s.", path, strings.Join(allowed, ", "))
}

// Match checks v against re; what names the expected form in the message.
func (e *Errors) Match(path, v string, re *regexp.Regexp, what string) {
	if !re.MatchString(v) {
		e.Addf(path, "The %s field format is invalid: %s.", path, what)
	}
}

// MaxItems checks the length of a list.
func (e *Errors) MaxItems(path string, n, max int) {
	if n > max {
		e.Addf(path, "The %s field must not have more than %d items.", path, max)
	}
}

// Combine merges validation errors into one; a path already named by an earlier error keeps
// only the earlier messages (a field that could not be decoded is not also "required").
// Each error's faults keep the order they were found in. Other errors pass through first.
func Combine(errs ...error) error {
	var out Errors
	for _, err := range errs {
		if err == nil {
			continue
		}
		e, ok := err.(*data.Error)
		if !ok || e.Code != data.EINVALID {
			return err
		}
		for _, p := range e.FieldPaths() { // found order: "Line 2" is named before "Line 10"
			if out.Has(p) {
				continue
			}
			for _, m := range e.Fields[p] {
				out.Add(p, m)
			}
		}
		out.Omit(e.Omitted())
	}
	return out.Err()
}

// CombineUncovered is Combine for faults found after first's (a body's references after
// its own rules): a fault of later at, or under, a path first names is left out, so a list
// refused whole (too many items, not a list) is not also told about each item. first's
// faults are kept whole, nested ones included.
func CombineUncovered(first, later error) error {
	var out, more Errors
	for i, err := range []error{first, later} {
		if err == nil {
			continue
		}
		e, ok := err.(*data.Error)
		if !ok || e.Code != data.EINVALID {
			return err
		}
		into := &out
		if i > 0 {
			into = &more
		}
		for _, p := range e.SortedFieldPaths() {
			for _, m := range e.Fields[p] {
				into.Add(p, m)
			}
		}
		into.Omit(e.Omitted())
	}
	out.AddUncovered(&more)
	return out.Err()
}

// SplitFaults parts a validation error into its faults at exactly paths and the others
// (each nil when it holds none); any other error comes back whole as rest.
func SplitFaults(err error, paths ...string) (at, rest error) {
	e, ok := err.(*data.Error)
	if !ok || e.Code != data.EINVALID {
		return nil, err
	}
	var a, r Errors
	for _, p := range e.SortedFieldPaths() {
		into := &r
		if slices.Contains(paths, p) {
			into = &a
		}
		for _, m := range e.Fields[p] {
			into.Add(p, m)
		}
	}
	r.Omit(e.Omitted()) // the uncounted faults are of no path asked for
	return a.Err(), r.Err()
}
