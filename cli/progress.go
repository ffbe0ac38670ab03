package cli

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress shows how far a long operation (backup, restore, import, export) has got, on
// standard error when that is a terminal, and nothing at all otherwise: pipes, files,
// journald, CI logs and tests get only the commands' one-line summaries. The zero value
// (no bar) does nothing, so callers never test whether it is shown.
type progress struct {
	bar *progressbar.ProgressBar
}

// forcedTerminal is implemented by writers that stand for a terminal whatever their file
// descriptor says: the tests' way of seeing the bar without a terminal.
type forcedTerminal interface {
	isTerminal() bool
}

// isTerminal reports whether w is an interactive terminal that can redraw a line.
func isTerminal(w io.Writer) bool {
	if f, ok := w.(forcedTerminal); ok {
		return f.isTerminal()
	}
	f, ok := w.(interface{ Fd() uintptr })
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}

// newProgress starts a byte counter on w described by what: a bar with a percentage when
// total is known, a spinner with the bytes done when total is -1. It draws at once, then
// at most ten times a second.
func newProgress(w io.Writer, total int64, what string) *progress {
	if !isTerminal(w) {
		return &progress{}
	}
	return &progress{bar: progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowTotalBytes(true),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(24),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionSetElapsedTime(true),
		// The command prints its own summary line after the bar: leave no bar behind it.
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true),
	)}
}

// newSpinner starts a spinner with the elapsed time on w, for a step with nothing to count.
func newSpinner(w io.Writer, what string) *progress {
	if !isTerminal(w) {
		return &progress{}
	}
	return &progress{bar: progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true),
	)}
}

// Writer returns w, counting what passes through it.
func (p *progress) Writer(w io.Writer) io.Writer {
	if p.bar == nil {
		return w
	}
	return io.MultiWriter(w, p.bar)
}

// Reader returns r, counting what is read from it.
func (p *progress) Reader(r io.Reader) io.Reader {
	if p.bar == nil {
		return r
	}
	return io.TeeReader(r, p.bar)
}

// Done clears the bar (whether the operation succeeded or not) and stops its spinner;
// later calls do nothing.
func (p *progress) Done() {
	if p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
}

// fileSize is the size of f for a bar's total, or -1 (a spinner) when it is
// not a regular file (standard input, a pipe) or cannot be read.
func fileSize(f *os.File) int64 {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return -1
	}
	return fi.Size()
}

// countProgress counts items (calls) rather than bytes: a spinner with the count.
type countProgress struct{ bar *progressbar.ProgressBar }

// newCountProgress starts an item counter on w described by what, when w is a terminal.
func newCountProgress(w io.Writer, what string) *countProgress {
	if !isTerminal(w) {
		return &countProgress{}
	}
	return &countProgress{bar: progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("calls"),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true),
	)}
}

// Add counts n more items.
func (p *countProgress) Add(n int) {
	if p.bar != nil {
		p.bar.Add(n)
	}
}

// Done clears the counter; later calls do nothing.
func (p *countProgress) Done() {
	if p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
}
