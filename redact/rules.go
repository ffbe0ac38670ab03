package redact

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
)

// Limits of one redaction setting. A custom rule runs over every transcript line, variable
// and analysis value of every call, so its cost is bounded: RE2 matching is linear in the
// text, with a factor that grows with the compiled program, hence MaxProgramSize and
// MaxRulesProgram; what one call may cost is bounded by MaxWork (Redactor.Work).
const (
	MaxRules        = 20   // custom rules per setting
	MaxPatternBytes = 1000 // bytes of one pattern
	MaxProgramSize  = 500  // instructions of one compiled pattern (regexp/syntax.Prog)
	MaxRulesProgram = 500  // instructions of a setting's patterns together
	MaxNameLen      = 32   // characters of a rule name (it is the marker)
	NamePattern     = `^[a-z][a-z0-9_]{0,31}$`
)

// storedProgramSize is the bound on one pattern's program before MaxRulesProgram: New
// compiles settings stored under it, which MaxWork bounds per call instead.
const storedProgramSize = 1000

// MaxWork bounds the custom rules' work on one call: the bytes of text redacted times the
// instructions of the rules that scan them (Redactor.Work). A call over it is refused
// before any rule runs; docs/redaction.md gives the figure it keeps a call's redaction
// under, and the benchmark that measures it (BenchmarkApplyAtMaxWork).
const MaxWork = 100_000_000

var namePattern = regexp.MustCompile(NamePattern)

// Fault is one validation failure: the dot path of the field (conventions §2, e.g.
// "redaction.rules.2.pattern") and a message naming it. The service layer adds each to its
// validation errors, which answer 422 validation_failed with every fault at once.
type Fault struct {
	Path    string
	Message string
}

// Validate checks one setting and returns every fault, in field order, with paths under
// path ("" for the top level). A nil result means the setting is valid.
func (c Config) Validate(path string) []Fault {
	var faults []Fault
	add := func(p, format string, args ...any) {
		faults = append(faults, Fault{Path: p, Message: fmt.Sprintf(format, args...)})
	}
	seen := map[string]bool{}
	for i, d := range c.Detectors {
		p := join(path, "detectors."+strconv.Itoa(i))
		switch {
		case !isDetector(d):
			add(p, "The selected %s is invalid; it must be one of: card, email, phone, iban, ssn.", p)
		case seen[d]:
			add(p, "The %s field has a duplicate value.", p)
		}
		seen[d] = true
	}
	if p := join(path, "rules"); len(c.Rules) > MaxRules {
		add(p, "The %s field must not have more than %d items.", p, MaxRules)
	}
	names := map[string]bool{}
	program := 0
	for i, rule := range c.Rules {
		base := join(path, "rules."+strconv.Itoa(i))
		np, pp := base+".name", base+".pattern"
		switch {
		case rule.Name == "":
			add(np, "The %s field is required.", np)
		case !namePattern.MatchString(rule.Name):
			add(np, "The %s field format is invalid: a lower-case letter, then up to %d lower-case letters, digits or underscores.", np, MaxNameLen-1)
		case isDetector(rule.Name):
			add(np, "The %s field must not be the name of a built-in detector.", np)
		case names[rule.Name]:
			add(np, "The %s field has a duplicate value.", np)
		}
		names[rule.Name] = true
		if rule.Pattern == "" {
			add(pp, "The %s field is required.", pp)
			continue
		}
		if _, size, msg := compilePattern(rule.Pattern, MaxProgramSize); msg != "" {
			add(pp, "The %s field %s", pp, msg)
		} else {
			program += size
		}
	}
	if p := join(path, "rules"); program > MaxRulesProgram {
		add(p, "The %s field's patterns must compile to at most %d instructions together (they compile to %d); drop rules, simplify them or lower their repetition counts.", p, MaxRulesProgram, program)
	}
	return faults
}

func join(parent, child string) string {
	if parent == "" {
		return child
	}
	return parent + "." + child
}

// compileRule checks a rule as New needs it: a valid name and an acceptable pattern.
func compileRule(r Rule) (*regexp.Regexp, int, string) {
	if !namePattern.MatchString(r.Name) || isDetector(r.Name) {
		return nil, 0, "invalid name"
	}
	return compilePattern(r.Pattern, storedProgramSize)
}

// compilePattern compiles an RE2 pattern within the limits (its program at most
// maxProgram instructions) and returns it with the size of its program, or returns the
// end of a message ("must …") saying why not.
func compilePattern(p string, maxProgram int) (*regexp.Regexp, int, string) {
	if len(p) > MaxPatternBytes {
		return nil, 0, fmt.Sprintf("must not be greater than %d bytes.", MaxPatternBytes)
	}
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return nil, 0, fmt.Sprintf("must be a valid RE2 regular expression: %s.", PatternProblem(p, err))
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, 0, fmt.Sprintf("must be a valid RE2 regular expression: %s.", PatternProblem(p, err))
	}
	if len(prog.Inst) > maxProgram {
		return nil, 0, fmt.Sprintf("must compile to at most %d instructions (it compiles to %d); simplify it or lower its repetition counts.", maxProgram, len(prog.Inst))
	}
	compiled, err := regexp.Compile(p)
	if err != nil {
		return nil, 0, fmt.Sprintf("must be a valid RE2 regular expression: %s.", PatternProblem(p, err))
	}
	if compiled.MatchString("") {
		return nil, 0, "must not match the empty string."
	}
	return compiled, len(prog.Inst), ""
}
