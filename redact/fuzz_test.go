package redact

import (
	"strings"
	"testing"
)

// digitRuns returns the maximal runs of ASCII digits of s.
func digitRuns(s string) []string {
	var runs []string
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		runs = append(runs, s[i:j])
		i = j
	}
	return runs
}

// FuzzApply checks, for every input, that Apply does not panic, that no Luhn-valid run of 13
// to 19 digits of the input is left as a run of the output, and that a second Apply changes
// nothing. The custom rule is there to exercise marker protection.
func FuzzApply(f *testing.F) {
	for _, s := range []string{
		"my card is 4111 1111 1111 1111 thanks",
		"four one one one one one one one one one one one one one one one",
		"call (415) 555-0123 or +44 20 7946 0958, ssn 123-45-6789",
		"IBAN GB82 WEST 1234 5698 7654 32 mail john dot smith at example dot com",
		"x4111111111111111y 41111111111111111 4111111111111111.5",
		"email me: a@b.co [card] [order_id] ORD-123456 order 4155550123",
		"social security number one two three four five six seven eight nine",
	} {
		f.Add(s)
	}
	r, err := New(Config{Detectors: Detectors, Rules: []Rule{{Name: "order_id", Pattern: `ORD-[0-9]{6}`}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		checkApply(t, r, in)
		checkApply(t, r, fromVocabulary(in))
	})
}

// vocabulary holds the pieces of text the detectors react to; fromVocabulary spells the
// fuzzer's bytes with them, so that spoken forms, cue words and separators meet in
// combinations that random bytes would almost never produce.
var vocabulary = []string{
	"zero", "oh", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
	"double", "triple", "plus", "at", "dot", "underscore", "email", "ssn", "social", "order",
	"number", "is", "com", "john", "4111", "1111", "415", "555", "0123", "45", "6789",
	"4111111111111111", "GB82", "WEST", "1234", "5698", "7654", "32", "[card]", "a@b.io",
	"(", ")", "+", ".", "x", "020", "7946", "0958", "01", "23",
}

var separators = []string{" ", "-", ", ", ""}

func fromVocabulary(in string) string {
	var b strings.Builder
	for i := 0; i < len(in) && i < 300; i++ {
		c := int(in[i])
		b.WriteString(vocabulary[c%len(vocabulary)])
		b.WriteString(separators[(c/len(vocabulary))%len(separators)])
	}
	return b.String()
}

func checkApply(t *testing.T, r *Redactor, in string) {
	t.Helper()
	out, _ := r.Apply(in)
	left := map[string]bool{}
	for _, run := range digitRuns(out) {
		left[run] = true
	}
	for _, run := range digitRuns(in) {
		if len(run) >= 13 && len(run) <= 19 && luhn([]byte(run)) && left[run] {
			t.Fatalf("Luhn-valid %s left in %q (from %q)", run, out, in)
		}
	}
	if again, c := r.Apply(out); again != out {
		t.Fatalf("not idempotent: %q -> %q -> %q (%v)", in, out, again, c)
	}
}
