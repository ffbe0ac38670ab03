package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// The summary of -mode targets: issue 17's figures, each against its goal. Nothing here
// runs a process or reads a file, so that the decisions are tested on their own.

// Issue 17's goals.
const (
	goalWriteRatio = 1.5           // voiceapi's req/s to PocketBase's, PUT and create: at least
	goalAgentBytes = 8_000         // file growth an agent, fresh agents (8 KB): at most
	goalSizeRatio  = 2             // file after agents and updates to PocketBase's: at most
	goalCallsBytes = 2_000_000_000 // file of the seeded calls (2 GB): at most
	goalTailRatio  = 3             // the calls page's p99 to its p50: at most
)

// verdict is where a figure stands against its goal.
type verdict int

const (
	unmeasured verdict = iota
	met
	missed
	invalid // measured, but with failed requests: not a figure to quote
)

// figure is one line of the summary.
type figure struct {
	name, measured, goal string
	verdict              verdict
	why                  string // unmeasured: why; invalid: what failed
	ceiling              string // the bare ceiling beside a throughput figure ("" for none)
}

// measurements are what a targets run measured, and the sizes it was asked for. A
// figure whose why is set was not measured; its fields are then zero.
type measurements struct {
	why map[int]string // by figure number (1-6)

	// Figures 1 and 2: each write load's median round in writeRounds' order, and each
	// load's failed requests over all its rounds.
	writes []result
	failed []int

	// Figure 3: file growth over records fresh agents; PocketBase's, when it ran (0: not).
	records               int
	agentGrowth, pbGrowth int64

	// Figure 4: both files after bigRecords creates and updates updates.
	bigRecords, updates int
	bigFile, pbBigFile  int64

	// Figure 5: the seeded directory's file.
	calls     int
	callsFile int64

	// Figure 6: the calls page and the bare page of 100 agents beside it; pageCalls is
	// how many calls the listed agent has (a page holds at most 100).
	page, barePage *result
	pageCalls      int
}

// summary decides every figure of m.
func summary(m measurements) []figure {
	figs := []figure{
		writeFigure(m, "full-body PUT of an agent (fsync per commit)", loadVoiceapiPut, loadPocketBasePatch, "PocketBase PATCH"),
		writeFigure(m, "create the same agent", loadVoiceapiCreate, loadPocketBaseCreate, "PocketBase"),
		agentBytesFigure(m),
		bigSizeFigure(m),
		callsSizeFigure(m),
		tailFigure(m),
	}
	for i := range figs {
		if why := m.why[i+1]; why != "" {
			figs[i] = figure{name: figs[i].name, goal: figs[i].goal, why: why}
		}
	}
	return figs
}

func writeFigure(m measurements, name string, v, p int, pbName string) figure {
	f := figure{name: name, goal: fmt.Sprintf("≥ %.1f× PocketBase", goalWriteRatio)}
	if len(m.writes) <= max(v, p) {
		f.why = "not run"
		return f
	}
	vr, pr, bare := m.writes[v], m.writes[p], m.writes[loadCeiling]
	f.measured = fmt.Sprintf("voiceapi %s req/s, %s %s req/s: %s×", num(vr.RPS), pbName, num(pr.RPS), ratio(vr.RPS, pr.RPS))
	f.ceiling = fmt.Sprintf("bare GET agent %s req/s (voiceapi %s of it)", num(bare.RPS), ratio(vr.RPS, bare.RPS))
	f.verdict = decide(pr.RPS > 0 && vr.RPS >= goalWriteRatio*pr.RPS)
	if n := m.failed[v] + m.failed[p]; n > 0 {
		f.verdict, f.why = invalid, fmt.Sprintf("failed requests: %d", n)
	}
	return f
}

func agentBytesFigure(m measurements) figure {
	f := figure{name: fmt.Sprintf("database bytes per agent, %s fresh agents, no updates", num(float64(m.records))),
		goal: fmt.Sprintf("≤ %s B (8 KB)", num(goalAgentBytes))}
	if m.records <= 0 || m.agentGrowth <= 0 {
		f.why = "not run"
		return f
	}
	f.measured = fmt.Sprintf("%s B an agent", num(perRecord(m.agentGrowth, m.records)))
	if m.pbGrowth > 0 {
		f.measured += fmt.Sprintf(" (PocketBase %s B a record)", num(perRecord(m.pbGrowth, m.records)))
	}
	// Integers: exactly 8,000 bytes an agent is met, one byte more over all is not.
	f.verdict = decide(m.agentGrowth <= goalAgentBytes*int64(m.records))
	return f
}

func bigSizeFigure(m measurements) figure {
	f := figure{name: fmt.Sprintf("database after %s agents and %s updates", num(float64(m.bigRecords)), num(float64(m.updates))),
		goal: fmt.Sprintf("≤ %d× PocketBase", goalSizeRatio)}
	if m.bigFile <= 0 || m.pbBigFile <= 0 {
		f.why = "not run"
		return f
	}
	f.measured = fmt.Sprintf("voiceapi %s, PocketBase %s: %s×", megabytes(m.bigFile), megabytes(m.pbBigFile), ratio(float64(m.bigFile), float64(m.pbBigFile)))
	f.verdict = decide(m.bigFile <= goalSizeRatio*m.pbBigFile)
	return f
}

func callsSizeFigure(m measurements) figure {
	f := figure{name: fmt.Sprintf("database of %s calls (bench seeder)", num(float64(m.calls))),
		goal: fmt.Sprintf("≤ %s B (2 GB)", num(goalCallsBytes))}
	if m.calls <= 0 || m.callsFile <= 0 {
		f.why = "not run"
		return f
	}
	f.measured = fmt.Sprintf("%s B (%s B a call)", num(float64(m.callsFile)), num(perRecord(m.callsFile, m.calls)))
	f.verdict = decide(m.callsFile <= goalCallsBytes)
	return f
}

func tailFigure(m measurements) figure {
	f := figure{name: "calls list, page of 100: p99 / p50", goal: fmt.Sprintf("p99 ≤ %d× p50", goalTailRatio)}
	if m.page == nil || m.page.P50 <= 0 {
		f.why = "not run"
		return f
	}
	p := m.page
	f.measured = fmt.Sprintf("%s / %s: %s× (%s req/s)", fmtDur(p.P99), fmtDur(p.P50), ratio(float64(p.P99), float64(p.P50)), num(p.RPS))
	if m.pageCalls < 100 {
		f.measured += fmt.Sprintf("; pages of %d calls, not 100", m.pageCalls)
	}
	if m.barePage != nil {
		f.ceiling = fmt.Sprintf("bare page of 100 agents %s req/s (voiceapi %s of it)", num(m.barePage.RPS), ratio(p.RPS, m.barePage.RPS))
	}
	f.verdict = decide(p.P99 <= goalTailRatio*p.P50)
	if n := p.Non2xx + p.Errors; n > 0 {
		f.verdict, f.why = invalid, fmt.Sprintf("failed requests: %d", n)
	}
	return f
}

func decide(ok bool) verdict {
	if ok {
		return met
	}
	return missed
}

// cells renders a figure's measured and met columns.
func (f figure) cells() (measured, isMet string) {
	switch f.verdict {
	case met:
		return f.measured, "yes"
	case missed:
		return f.measured, "no"
	case invalid:
		return f.measured, "invalid: " + f.why
	}
	return "not measured (" + f.why + ")", "-"
}

// renderSummary writes the figures as a Markdown table, padded to be read as it is.
func renderSummary(w io.Writer, figs []figure) error {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	fmt.Fprintln(tw, "| figure\t| measured\t| goal\t| met\t| bare ceiling\t|")
	fmt.Fprintln(tw, "|---\t|---\t|---\t|---\t|---\t|")
	for i, f := range figs {
		measured, isMet := f.cells()
		ceiling := f.ceiling
		if ceiling == "" {
			ceiling = "-"
		}
		fmt.Fprintf(tw, "| %d. %s\t| %s\t| %s\t| %s\t| %s\t|\n", i+1, f.name, measured, f.goal, isMet, ceiling)
	}
	return tw.Flush()
}

// perRecord is total/n, truncated as -mode pocketbase's tables print it.
func perRecord(total int64, n int) float64 { return float64(total / int64(n)) }

// ratio is a/b with two decimals ("-" when b is 0).
func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// megabytes is n bytes in MB (10^6), one decimal.
func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// num is x rounded to an integer, its thousands separated by commas.
func num(x float64) string {
	s := fmt.Sprintf("%.0f", math.Abs(x))
	var b strings.Builder
	if x <= -0.5 {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
