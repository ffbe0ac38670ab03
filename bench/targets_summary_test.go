package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// measuredAtGoals is a run in which every figure is measured and sits exactly at its
// goal: each case below moves one figure off it.
func measuredAtGoals() measurements {
	writes := make([]result, 5)
	writes[loadCeiling] = result{RPS: 20000}
	writes[loadVoiceapiPut], writes[loadPocketBasePatch] = result{RPS: 1500}, result{RPS: 1000}
	writes[loadVoiceapiCreate], writes[loadPocketBaseCreate] = result{RPS: 3000}, result{RPS: 2000}
	return measurements{
		why:    map[int]string{},
		writes: writes, failed: make([]int, 5),
		records: 1000, agentGrowth: 8_000_000, pbGrowth: 4_000_000,
		bigRecords: 100_000, updates: 58_000, bigFile: 800_000_000, pbBigFile: 400_000_000,
		calls: 1_000_000, callsFile: 2_000_000_000,
		page: &result{RPS: 300, P50: 100 * time.Millisecond, P99: 300 * time.Millisecond}, barePage: &result{RPS: 6000}, pageCalls: 100,
	}
}

// TestSummaryVerdicts: a figure exactly at its goal is met, one just past it is not, and
// one without its measurements (or with failed requests) says so instead of deciding.
func TestSummaryVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		figure int // 1-6
		change func(*measurements)
		want   verdict
		why    string
		moves  []int // other figures the change takes away too
	}{
		{"PUT at 1.5x", 1, func(m *measurements) {}, met, "", nil},
		{"PUT just under 1.5x", 1, func(m *measurements) { m.writes[loadVoiceapiPut].RPS = 1499.99 }, missed, "", nil},
		{"PUT without PocketBase", 1, func(m *measurements) {
			m.writes, m.pbGrowth, m.pbBigFile = nil, 0, 0
			m.why[1], m.why[2], m.why[4] = "no -pocketbase", "no -pocketbase", "no -pocketbase"
		}, unmeasured, "no -pocketbase", []int{2, 4}},
		{"PUT rounds not run", 1, func(m *measurements) { m.writes = nil }, unmeasured, "not run", []int{2}},
		{"PUT with failed requests", 1, func(m *measurements) { m.failed[loadPocketBasePatch] = 3 }, invalid, "failed requests: 3", nil},
		{"PocketBase answered nothing", 1, func(m *measurements) { m.writes[loadPocketBasePatch].RPS = 0 }, missed, "", nil},
		{"create at 1.5x", 2, func(m *measurements) {}, met, "", nil},
		{"create just under 1.5x", 2, func(m *measurements) { m.writes[loadPocketBaseCreate].RPS = 2000.01 }, missed, "", nil},
		{"create failed, PUT clean", 2, func(m *measurements) { m.failed[loadVoiceapiCreate] = 1 }, invalid, "failed requests: 1", nil},
		{"8,000 B an agent", 3, func(m *measurements) {}, met, "", nil},
		{"one byte over 8,000 B an agent", 3, func(m *measurements) { m.agentGrowth++ }, missed, "", nil},
		{"no PocketBase beside figure 3", 3, func(m *measurements) { m.pbGrowth = 0 }, met, "", nil},
		{"agents not created", 3, func(m *measurements) { m.agentGrowth = 0 }, unmeasured, "not run", nil},
		{"twice PocketBase's file", 4, func(m *measurements) {}, met, "", nil},
		{"a byte more than twice", 4, func(m *measurements) { m.bigFile++ }, missed, "", nil},
		{"no PocketBase file", 4, func(m *measurements) { m.pbBigFile = 0 }, unmeasured, "not run", nil},
		{"2 GB of calls", 5, func(m *measurements) {}, met, "", nil},
		{"a byte over 2 GB", 5, func(m *measurements) { m.callsFile++ }, missed, "", nil},
		{"seeding failed", 5, func(m *measurements) { m.why[5] = "failed: see below" }, unmeasured, "failed: see below", nil},
		{"p99 at 3x p50", 6, func(m *measurements) {}, met, "", nil},
		{"p99 a microsecond past 3x", 6, func(m *measurements) { m.page.P99 += time.Microsecond }, missed, "", nil},
		{"no page run", 6, func(m *measurements) { m.page = nil }, unmeasured, "not run", nil},
		{"no p50", 6, func(m *measurements) { m.page.P50 = 0 }, unmeasured, "not run", nil},
		{"page with socket errors", 6, func(m *measurements) { m.page.Errors = 2 }, invalid, "failed requests: 2", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := measuredAtGoals()
			tc.change(&m)
			figs := summary(m)
			if len(figs) != 6 {
				t.Fatalf("%d figures", len(figs))
			}
			f := figs[tc.figure-1]
			if f.verdict != tc.want || f.why != tc.why {
				t.Errorf("figure %d: verdict %v, why %q; want %v, %q (%+v)", tc.figure, f.verdict, f.why, tc.want, tc.why, f)
			}
			for i, other := range figs {
				if i != tc.figure-1 && !slices.Contains(tc.moves, i+1) && other.verdict != met {
					t.Errorf("figure %d moved too: %+v", i+1, other)
				}
			}
		})
	}
}

func TestSummaryMeasuredText(t *testing.T) {
	figs := summary(measuredAtGoals())
	for i, want := range []string{
		"voiceapi 1,500 req/s, PocketBase PATCH 1,000 req/s: 1.50×",
		"voiceapi 3,000 req/s, PocketBase 2,000 req/s: 1.50×",
		"8,000 B an agent (PocketBase 4,000 B a record)",
		"voiceapi 800.0 MB, PocketBase 400.0 MB: 2.00×",
		"2,000,000,000 B (2,000 B a call)",
		"300.00ms / 100.00ms: 3.00× (300 req/s)",
	} {
		if figs[i].measured != want {
			t.Errorf("figure %d: %q, want %q", i+1, figs[i].measured, want)
		}
	}
	if c := figs[0].ceiling; c != "bare GET agent 20,000 req/s (voiceapi 0.07 of it)" {
		t.Errorf("figure 1's ceiling: %q", c)
	}
	if c := figs[5].ceiling; c != "bare page of 100 agents 6,000 req/s (voiceapi 0.05 of it)" {
		t.Errorf("figure 6's ceiling: %q", c)
	}
	m := measuredAtGoals()
	m.pageCalls = 40
	if got := summary(m)[5].measured; !strings.HasSuffix(got, "; pages of 40 calls, not 100") {
		t.Errorf("a short page is not named: %q", got)
	}
}

// TestRenderSummary: one Markdown row a figure, padded so that every column's bars line
// up, with "-" where a figure has no decision or no ceiling.
func TestRenderSummary(t *testing.T) {
	figs := []figure{
		{name: "a", measured: "1,500 req/s", goal: "≥ 1.5×", verdict: met, ceiling: "bare 9 req/s"},
		{name: "b", measured: "9 B", goal: "≤ 8 B", verdict: missed},
		{name: "c", goal: "≤ 2×", why: "no -pocketbase"},
		{name: "d", measured: "3.10×", goal: "≤ 3×", verdict: invalid, why: "failed requests: 2"},
	}
	var buf bytes.Buffer
	if err := renderSummary(&buf, figs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
	cells := func(line string) []string {
		f := strings.Split(line, "|")
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		return f[1 : len(f)-1]
	}
	for i, want := range [][]string{
		{"figure", "measured", "goal", "met", "bare ceiling"},
		{"---", "---", "---", "---", "---"},
		{"1. a", "1,500 req/s", "≥ 1.5×", "yes", "bare 9 req/s"},
		{"2. b", "9 B", "≤ 8 B", "no", "-"},
		{"3. c", "not measured (no -pocketbase)", "≤ 2×", "-", "-"},
		{"4. d", "3.10×", "≤ 3×", "invalid: failed requests: 2", "-"},
	} {
		if got := cells(lines[i]); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("line %d: %q, want %q", i+1, got, want)
		}
	}
	bars := func(line string) (at []int) {
		for i, r := range []rune(line) {
			if r == '|' {
				at = append(at, i)
			}
		}
		return at
	}
	for i, l := range lines {
		if got, want := bars(l), bars(lines[0]); len(got) != 6 || !slices.Equal(got, want) {
			t.Errorf("line %d's bars at %v, the header's at %v (%d runes):\n%s", i+1, got, want, utf8.RuneCountInString(l), buf.String())
		}
	}
}

func TestNum(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{{0, "0"}, {999, "999"}, {999.5, "1,000"}, {1000, "1,000"}, {1234567, "1,234,567"}, {2e9, "2,000,000,000"}, {-4200, "-4,200"}} {
		if got := num(tc.x); got != tc.want {
			t.Errorf("num(%v) = %q, want %q", tc.x, got, tc.want)
		}
	}
}
