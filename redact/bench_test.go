package redact

import (
	"fmt"
	"strings"
	"testing"
)

// transcript10KB is about 10 KB of call transcript: ordinary talk with times, prices and
// order numbers, and now and then a card, a phone number or an address.
func transcript10KB() string {
	lines := []string{
		"agent: Thanks for calling, how can I help you today?",
		"user: Hi, I ordered 3 lamps on May 12 and order 58213 hasn't arrived yet.",
		"agent: I'm sorry to hear that. Can I have the phone number on the account?",
		"user: Sure, it's four one five, five five five, zero one two three.",
		"agent: Thank you. I see the order, it shipped at 10:30 and costs $129.99 in total.",
		"user: I'd like a refund to my card, 4111 1111 1111 1111, if that's possible.",
		"agent: Of course. I'll also email a receipt to john dot smith at example dot com.",
		"user: Great. My zip is 94103 and my other number is (212) 555-0147.",
		"agent: Done. Is there anything else I can help you with today?",
		"user: No, that's all, thanks a lot, bye.",
	}
	var b strings.Builder
	for b.Len() < 10*1024 {
		for _, l := range lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()[:10*1024]
}

func benchApply(b *testing.B, r *Redactor, text string) {
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		r.Apply(text)
	}
}

// BenchmarkApply10KB: every built-in detector over a 10 KB transcript.
func BenchmarkApply10KB(b *testing.B) {
	r, err := New(Config{Detectors: Detectors})
	if err != nil {
		b.Fatal(err)
	}
	benchApply(b, r, transcript10KB())
}

// BenchmarkApply10KBNoPII: the common case, a transcript with numbers but nothing to redact.
func BenchmarkApply10KBNoPII(b *testing.B) {
	r, err := New(Config{Detectors: Detectors})
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("user: I ordered 3 lamps on May 12 for $129.99 at 10:30, order 58213.\n", 150)[:10*1024]
	benchApply(b, r, text)
}

// BenchmarkApply10KBDigits: the worst case for the digit detectors, 10 KB of digits read
// one by one, each starting windows.
func BenchmarkApply10KBDigits(b *testing.B) {
	r, err := New(Config{Detectors: Detectors})
	if err != nil {
		b.Fatal(err)
	}
	benchApply(b, r, strings.Repeat("7 ", 5*1024))
}

// BenchmarkApply10KBMaxRules: the built-ins plus 20 custom rules, each near the program
// size limit.
func BenchmarkApply10KBMaxRules(b *testing.B) {
	cfg := Config{Detectors: Detectors}
	for i := range MaxRules {
		cfg.Rules = append(cfg.Rules, Rule{Name: fmt.Sprintf("r%d", i), Pattern: fmt.Sprintf(`Z%d[a-z0-9]{5,450}`, i)})
	}
	r, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	benchApply(b, r, transcript10KB())
}

// BenchmarkApplyAtMaxWork: one call's text at the work budget (MaxWork), in the shape
// that costs the most per unit of work found so far: many short rules with no literal
// prefix (RE2's backtracker runs them over items of up to 10,000 characters, trying every
// start), a match in each item so that a second round runs, every built-in detector on.
// ns/unit is the time per unit of Work (bytes times rule instructions) of one round.
func BenchmarkApplyAtMaxWork(b *testing.B) {
	cfg := Config{Detectors: Detectors}
	for i := range 2 * MaxRules { // a workspace's rules and an agent's, merged
		cfg.Rules = append(cfg.Rules, Rule{Name: fmt.Sprintf("r%d", i), Pattern: fmt.Sprintf(`[a-z ]{1,11}Q%d`, i%10)})
	}
	r, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	line := "so i was saying that the parcel never came and the driver did not call "
	item := strings.Repeat(line, 9900/len(line)) + "xyzQ3"
	var items []string
	for total := 0; r.Work(total+len(item)) <= MaxWork; total += len(item) {
		items = append(items, item)
	}
	bytes := len(items) * len(item)
	b.SetBytes(int64(bytes))
	b.ReportAllocs()
	for b.Loop() {
		for _, it := range items {
			r.Apply(it)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(r.Work(bytes)), "ns/unit")
}
