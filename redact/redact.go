// Package redact replaces personal data in text with typed markers ("[card]", "[email]",
// "[phone]", "[iban]", "[ssn]", or "[name]" of a custom rule) before the text is stored.
// It is pure: no storage, no I/O. docs/redaction.md describes the detectors, their
// precedence, the limits of custom rules and the measured precision and recall.
package redact

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// The built-in detectors, named as in a Config and in their markers.
const (
	Card  = "card"
	Email = "email"
	Phone = "phone"
	IBAN  = "iban"
	SSN   = "ssn"
)

// Detectors lists the built-in detectors in the order Apply runs them: an earlier detector
// wins where two would match the same characters.
var Detectors = []string{IBAN, Email, Card, SSN, Phone}

// Config is one redaction setting, as a workspace or an agent holds it.
type Config struct {
	// Detectors names the built-in detectors that are on.
	Detectors []string `json:"detectors"`
	// Rules are custom regular expressions, applied after the built-in detectors.
	Rules []Rule `json:"rules"`
}

// Rule is a custom detector: matches of Pattern (RE2 syntax) become "[Name]".
type Rule struct {
	Name    string `json:"name"`
	Pattern string `json:"pattern"`
}

// Counts holds how many matches each marker replaced, keyed by marker name ("card", or a
// rule's name). It is nil when nothing was replaced.
type Counts map[string]int

// Total returns the number of replacements.
func (c Counts) Total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

func (c *Counts) add(name string, n int) {
	if n == 0 {
		return
	}
	if *c == nil {
		*c = Counts{}
	}
	(*c)[name] += n
}

// Merge returns the setting that applies to an agent's calls: the workspace's detectors
// and rules plus the agent's. An agent can add redaction but never turn off what its
// workspace requires. Rules keep their order, the workspace's first; a rule the agent
// repeats under the same name applies as well (it cannot replace the workspace's pattern).
func Merge(workspace, agent Config) Config {
	var out Config
	seen := map[string]bool{}
	for _, d := range append(append([]string(nil), workspace.Detectors...), agent.Detectors...) {
		if !seen[d] {
			seen[d] = true
			out.Detectors = append(out.Detectors, d)
		}
	}
	out.Rules = append(append([]Rule(nil), workspace.Rules...), agent.Rules...)
	return out
}

// Redactor applies one compiled Config. It is safe for concurrent use.
type Redactor struct {
	on    map[string]bool
	rules []compiledRule
	names map[string]bool // the marker names: every built-in detector and every rule
	// program is the instructions of the rules' programs together (Work).
	program int
}

// Work is what the custom rules cost on text of textBytes bytes, in the unit MaxWork
// bounds: RE2 runs each rule's program over the text once per round, in time linear in
// both. The built-in detectors are linear in the text alone and are not counted.
func (r *Redactor) Work(textBytes int) int64 {
	if r == nil {
		return 0
	}
	return int64(textBytes) * int64(r.program)
}

type compiledRule struct {
	name string
	re   *regexp.Regexp
}

// New compiles c, usually the result of Merge of two settings that each passed Validate. It
// refuses an unknown detector and any rule Validate would refuse, except that it allows up
// to twice MaxRules and repeated names (which Merge produces).
func New(c Config) (*Redactor, error) {
	r := &Redactor{on: map[string]bool{}, names: map[string]bool{}}
	for _, d := range Detectors {
		r.names[d] = true
	}
	for _, d := range c.Detectors {
		if !isDetector(d) {
			return nil, fmt.Errorf("redact: unknown detector %q", d)
		}
		r.on[d] = true
	}
	if len(c.Rules) > 2*MaxRules {
		return nil, fmt.Errorf("redact: %d rules, at most %d", len(c.Rules), 2*MaxRules)
	}
	for i, rule := range c.Rules {
		re, size, msg := compileRule(rule)
		if msg != "" {
			return nil, fmt.Errorf("redact: rule %d (%s): %s", i, rule.Name, msg)
		}
		r.rules = append(r.rules, compiledRule{name: rule.Name, re: re})
		r.names[rule.Name] = true
		r.program += size
	}
	return r, nil
}

func isDetector(d string) bool {
	for _, k := range Detectors {
		if d == k {
			return true
		}
	}
	return false
}

// Apply returns text with every match replaced by its marker, and the counts per marker.
// Detectors run in the order of Detectors, then the custom rules in order; each sees the
// output of the one before, so markers already placed are never matched again. A marker
// can change what a detector sees beside it: "x@y.coORD-123456" becomes "x@y.co[order_id]",
// now an address; an IBAN followed by a card number becomes one followed by "[card]". So
// while a round replaced something, the whole sequence runs again on its output, up to
// maxRounds times: the result is what a second Apply leaves unchanged.
func (r *Redactor) Apply(text string) (string, Counts) {
	out := replacer{}
	text = r.apply(text, &out)
	return text, out.counts
}

// Find returns what Apply would replace, as byte ranges of text, in order.
func (r *Redactor) Find(text string) []Match {
	out := replacer{track: true}
	r.apply(text, &out)
	matches := make([]Match, len(out.edits))
	for i, e := range out.edits {
		matches[i] = Match{Start: e.os, End: e.oe, Type: e.name}
	}
	return matches
}

// Match is one replaced range of the input: bytes Start to End, replaced by "[Type]".
type Match struct {
	Start, End int
	Type       string
}

func (r *Redactor) apply(text string, out *replacer) string {
	for round := 0; round < maxRounds; round++ {
		before := out.replaced
		text = r.applyBuiltins(text, out)
		for _, rule := range r.rules {
			text = applyRule(text, rule, r.names, out)
		}
		if out.replaced == before {
			break
		}
	}
	return text
}

// tokenPool keeps token buffers between calls: a transcript has a few hundred tokens.
var tokenPool = sync.Pool{New: func() any { return new(tokens) }}

// maxRounds bounds the rounds of Apply. Each round only turns text into markers, and a
// round finds something new only where the one before changed a detector's context, which
// takes contrived text; two rounds are the rule when anything was found.
const maxRounds = 4

func (r *Redactor) applyBuiltins(text string, out *replacer) string {
	if r.on[IBAN] {
		text = replaceSpans(text, ibanSpans(text), IBAN, out)
	}
	if r.on[Email] {
		text = replaceSpans(text, emailSpans(text), Email, out)
		text = replaceSpans(text, spokenEmailSpans(text, r.names), Email, out)
	}
	if !r.on[Card] && !r.on[SSN] && !r.on[Phone] {
		return text
	}
	t := tokenPool.Get().(*tokens)
	defer func() {
		t.text = "" // do not keep the caller's text alive in the pool
		tokenPool.Put(t)
	}()
	t.list = t.list[:0]
	for _, d := range [...]struct {
		name  string
		spans func(*tokens) [][2]int
	}{{Card, cardSpans}, {SSN, ssnSpans}, {Phone, phoneSpans}} {
		if !r.on[d.name] {
			continue
		}
		if scanned := t.text == text && t.text != ""; !scanned {
			scanTokens(text, t, r.names)
		}
		if len(t.list) == 0 {
			break
		}
		text = replaceSpans(text, d.spans(t), d.name, out)
	}
	return text
}

// replacer counts replacements and, for Find, keeps where each marker came from.
type replacer struct {
	counts   Counts
	replaced int // replacements so far
	track    bool
	edits    []edit // markers of the current text, in order
}

// edit is one marker: bytes s to e of the current text replaced bytes os to oe of the input.
type edit struct {
	s, e, os, oe int
	name         string
}

// record merges the new spans (current-text bytes, sorted) into the edits, mapping each
// back to input bytes through the markers before it and shifting the markers after it.
func (r *replacer) record(spans [][2]int, name string) {
	merged := make([]edit, 0, len(r.edits)+len(spans))
	d, m, i := 0, 0, 0 // d: current minus input offset; m: new minus current offset
	old := func(e edit) {
		merged = append(merged, edit{e.s + m, e.e + m, e.os, e.oe, e.name})
		d += (e.e - e.s) - (e.oe - e.os)
	}
	for _, sp := range spans {
		for ; i < len(r.edits) && r.edits[i].s < sp[0]; i++ {
			old(r.edits[i])
		}
		n := len(name) + 2
		merged = append(merged, edit{sp[0] + m, sp[0] + m + n, sp[0] - d, sp[1] - d, name})
		m += n - (sp[1] - sp[0])
	}
	for ; i < len(r.edits); i++ {
		old(r.edits[i])
	}
	r.edits = merged
}

// replaceSpans replaces each of the sorted, disjoint spans with "[name]".
func replaceSpans(text string, spans [][2]int, name string, out *replacer) string {
	if len(spans) == 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	last := 0
	for _, s := range spans {
		b.WriteString(text[last:s[0]])
		b.WriteByte('[')
		b.WriteString(name)
		b.WriteByte(']')
		last = s[1]
	}
	b.WriteString(text[last:])
	out.counts.add(name, len(spans))
	out.replaced += len(spans)
	if out.track {
		out.record(spans, name)
	}
	return b.String()
}

// applyRule replaces the matches of one custom rule, skipping any that is empty or touches
// a marker already in the text (so a rule never rewrites "[card]" or its own markers).
func applyRule(text string, rule compiledRule, names map[string]bool, out *replacer) string {
	locs := rule.re.FindAllStringIndex(text, -1)
	if len(locs) == 0 {
		return text
	}
	markers := markerSpans(text, names)
	var spans [][2]int
	m := 0
	for _, l := range locs {
		if l[0] == l[1] {
			continue
		}
		for m < len(markers) && markers[m][1] <= l[0] {
			m++
		}
		if m < len(markers) && markers[m][0] < l[1] {
			continue
		}
		spans = append(spans, [2]int{l[0], l[1]})
	}
	return replaceSpans(text, spans, rule.name, out)
}

// markerSpans returns the byte ranges of the markers ("[name]") in text.
func markerSpans(text string, names map[string]bool) [][2]int {
	var out [][2]int
	for i := 0; i < len(text); i++ {
		if text[i] == '[' {
			if e := markerEnd(text, i, names); e > 0 {
				out = append(out, [2]int{i, e})
				i = e - 1
			}
		}
	}
	return out
}
