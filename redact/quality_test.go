package redact

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// evalExample is one line of testdata/eval.jsonl: a text and the spans a perfect redactor
// replaces, each given as its exact text (found left to right) and its marker type.
type evalExample struct {
	Text  string `json:"text"`
	Spans []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"spans"`
}

type labelled struct {
	text string
	gold []Match
}

func loadEval(t *testing.T, name string) []labelled {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []labelled
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		var e evalExample
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s:%d: %v", name, line, err)
		}
		l := labelled{text: e.Text}
		from := 0
		for _, s := range e.Spans {
			i := strings.Index(e.Text[from:], s.Text)
			if i < 0 {
				t.Fatalf("%s:%d: span %q not in text", name, line, s.Text)
			}
			l.gold = append(l.gold, Match{Start: from + i, End: from + i + len(s.Text), Type: s.Type})
			from += i + len(s.Text)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// trimmed narrows a span to its first and last letter or digit, so "(415) 555-0123" and
// "415) 555-0123" compare equal but a span missing a digit does not.
func trimmed(text string, m Match) [2]int {
	s, e := m.Start, m.End
	for s < e && !isAlnum(text[s]) {
		s++
	}
	for e > s && !isAlnum(text[e-1]) {
		e--
	}
	return [2]int{s, e}
}

// quality counts, per type, the found spans that equal a labelled span (true positives),
// the found spans that do not (false positives) and the labelled spans not found.
type quality struct{ tp, fp, fn int }

func (q quality) precision() float64 { return ratio(q.tp, q.tp+q.fp) }
func (q quality) recall() float64    { return ratio(q.tp, q.tp+q.fn) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

func measure(t *testing.T, r *Redactor, set []labelled) map[string]*quality {
	q := map[string]*quality{}
	for _, d := range Detectors {
		q[d] = &quality{}
	}
	for _, l := range set {
		found := r.Find(l.text)
		gold := map[[2]int]string{}
		for _, g := range l.gold {
			gold[trimmed(l.text, g)] = g.Type
		}
		hit := map[[2]int]bool{}
		for _, f := range found {
			k := trimmed(l.text, f)
			if gold[k] == f.Type {
				q[f.Type].tp++
				hit[k] = true
				continue
			}
			q[f.Type].fp++
			if testing.Verbose() {
				t.Logf("false %s: %q in %q", f.Type, l.text[f.Start:f.End], l.text)
			}
		}
		for _, g := range l.gold {
			if !hit[trimmed(l.text, g)] {
				q[g.Type].fn++
				if testing.Verbose() {
					t.Logf("missed %s: %q in %q", g.Type, l.text[g.Start:g.End], l.text)
				}
			}
		}
	}
	return q
}

// qualityFloors are the precision and recall each detector must keep on testdata/eval.jsonl
// and, lower, on testdata/holdout.jsonl (written after the tuning, never tuned on): a little
// under what each measures today (docs/redaction.md), so a change that loses ground fails.
var qualityFloors = map[string]map[string][2]float64{
	"testdata/eval.jsonl": {
		Card: {0.95, 0.95}, Email: {0.95, 0.85}, Phone: {0.95, 0.90}, IBAN: {0.95, 0.95}, SSN: {0.95, 0.95},
	},
	"testdata/holdout.jsonl": {
		Card: {0.80, 0.80}, Email: {0.80, 0.80}, Phone: {0.80, 0.80}, IBAN: {0.80, 0.80}, SSN: {0.80, 0.60},
	},
	// hard.jsonl: the hard forms in scope (make_hard.py), written after the tuning.
	"testdata/hard.jsonl": {
		Card: {0.90, 0.85}, Email: {0.90, 0.90}, Phone: {0.90, 0.90}, IBAN: {0.90, 0.90}, SSN: {0.90, 0.90},
	},
	// beyond.jsonl: forms out of scope, measured and reported, never held to a floor.
	"testdata/beyond.jsonl": {},
}

// TestDetectorQuality measures precision and recall per detector over the labelled sets and
// prints the tables of docs/redaction.md (go test -run TestDetectorQuality -v ./redact/).
func TestDetectorQuality(t *testing.T) {
	r, err := New(Config{Detectors: Detectors})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"testdata/eval.jsonl", "testdata/holdout.jsonl", "testdata/hard.jsonl", "testdata/beyond.jsonl"} {
		set := loadEval(t, name)
		pos, neg := 0, 0
		for _, l := range set {
			if len(l.gold) > 0 {
				pos++
			} else {
				neg++
			}
		}
		if name == "testdata/eval.jsonl" && len(set) < 200 {
			t.Fatalf("%d examples, want at least 200", len(set))
		}
		q := measure(t, r, set)
		var b strings.Builder
		fmt.Fprintf(&b, "%s: %d examples, %d with spans, %d hard negatives\n", name, len(set), pos, neg)
		fmt.Fprintf(&b, "| detector | labelled | found | correct | precision | recall |\n|---|---|---|---|---|---|\n")
		for _, d := range Detectors {
			x := q[d]
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %.3f | %.3f |\n", d, x.tp+x.fn, x.tp+x.fp, x.tp, x.precision(), x.recall())
		}
		t.Log("\n" + b.String())
		for _, d := range Detectors {
			x, floor := q[d], qualityFloors[name][d]
			if x.precision() < floor[0] || x.recall() < floor[1] {
				t.Errorf("%s %s: precision %.3f recall %.3f, floors %.2f and %.2f", name, d, x.precision(), x.recall(), floor[0], floor[1])
			}
		}
	}
}

// TestEvalIdempotent applies the redactor twice to every labelled text: the second pass
// finds nothing, and Apply's output is the text with Find's matches replaced.
func TestEvalIdempotent(t *testing.T) {
	r, err := New(Config{Detectors: Detectors, Rules: []Rule{{Name: "order_ref", Pattern: `(?i)order \d+`}}})
	if err != nil {
		t.Fatal(err)
	}
	set := append(loadEval(t, "testdata/eval.jsonl"), loadEval(t, "testdata/holdout.jsonl")...)
	for _, l := range set {
		out, _ := r.Apply(l.text)
		if again, c := r.Apply(out); again != out {
			t.Errorf("second pass over %q changed %q to %q (%v)", l.text, out, again, c)
		}
		var b strings.Builder
		last := 0
		for _, m := range r.Find(l.text) {
			b.WriteString(l.text[last:m.Start] + "[" + m.Type + "]")
			last = m.End
		}
		b.WriteString(l.text[last:])
		if b.String() != out {
			t.Errorf("Find and Apply disagree on %q: %q vs %q", l.text, b.String(), out)
		}
	}
}
