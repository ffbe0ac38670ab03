package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testdirs"
)

// fakeTerminal collects what the commands write to standard error while claiming to be a
// terminal, so that the bar is drawn.
type fakeTerminal struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (f *fakeTerminal) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.b.Write(p)
}

func (f *fakeTerminal) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.b.String()
}

func (f *fakeTerminal) isTerminal() bool { return true }

// runOnTerminal runs the command line with standard error on a fake terminal.
func runOnTerminal(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out bytes.Buffer
	errOut := &fakeTerminal{}
	root := NewRootCommand(&out, errOut)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// progressDescriptions are the texts the bars show; none may reach a non-terminal.
var progressDescriptions = []string{"writing the archive", "reading the archive", "writing the document", "reading the document", "checking and importing"}

// TestLongOperationsQuietWithoutTerminal: backup, restore, workspace export and import,
// with standard error on a buffer (as under a pipe, a file or CI), print their summary
// lines and no progress: no bar text, no carriage return.
func TestLongOperationsQuietWithoutTerminal(t *testing.T) {
	dir, u := stoppedDataDir(t)
	tmp := t.TempDir()
	archive, doc := filepath.Join(tmp, "b.tar.gz"), filepath.Join(tmp, "ws.json")
	steps := [][]string{
		{"backup", "--data", dir, "--out", archive},
		{"restore", "--data", testdirs.NewRestoreTarget(t), "--in", archive},
		{"workspace", "export", "--data", dir, "--workspace", u.PersonalWorkspaceID, "--out", doc},
		{"workspace", "import", "--data", dir, "--workspace", u.PersonalWorkspaceID, "--in", doc},
	}
	for _, args := range steps {
		_, errOut, err := run(t, "", args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errOut)
		}
		if strings.ContainsAny(errOut, "\r\x1b") {
			t.Errorf("%v: control characters on a non-terminal: %q", args, errOut)
		}
		for _, d := range progressDescriptions {
			if strings.Contains(errOut, d) {
				t.Errorf("%v: progress %q on a non-terminal: %q", args, d, errOut)
			}
		}
	}
}

// TestLongOperationsShowProgressOnTerminal: the same commands on a terminal draw their
// bar, with byte counts, clear it, and still print their summary.
func TestLongOperationsShowProgressOnTerminal(t *testing.T) {
	dir, u := stoppedDataDir(t)
	tmp := t.TempDir()
	archive, doc := filepath.Join(tmp, "b.tar.gz"), filepath.Join(tmp, "ws.json")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"backup", "--data", dir, "--out", archive}, []string{"writing the archive", " B", "backed up "}},
		// The archive's size is known: the bar has a total and a percentage.
		{[]string{"restore", "--data", testdirs.NewRestoreTarget(t), "--in", archive}, []string{"reading the archive", "%", " B/", "restored "}},
		{[]string{"workspace", "export", "--data", dir, "--workspace", u.PersonalWorkspaceID, "--out", doc}, []string{"writing the document", " B"}},
		{[]string{"workspace", "import", "--data", dir, "--workspace", u.PersonalWorkspaceID, "--in", doc}, []string{"reading the document", "%", "checking and importing"}},
	} {
		_, errOut, err := runOnTerminal(t, tc.args...)
		if err != nil {
			t.Fatalf("%v: %v\n%q", tc.args, err, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: %q missing from the terminal output %q", tc.args, w, errOut)
			}
		}
		if !strings.Contains(errOut, "\r") {
			t.Errorf("%v: the bar is never redrawn or cleared (no carriage return): %q", tc.args, errOut)
		}
	}
}

// TestIsTerminal: files and pipes are not terminals; the fake is.
func TestIsTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for name, tc := range map[string]struct {
		w    io.Writer
		want bool
	}{"pipe": {w, false}, "file": {f, false}, "buffer": {&bytes.Buffer{}, false}, "fake terminal": {&fakeTerminal{}, true}} {
		if got := isTerminal(tc.w); got != tc.want {
			t.Errorf("%s: isTerminal %v, want %v", name, got, tc.want)
		}
	}
}

// TestProgressWriterAndReader: on a terminal the bar counts what passes and reaches 100%
// at the end, the data itself passes unchanged; elsewhere the writer and reader are the
// ones given, untouched.
func TestProgressWriterAndReader(t *testing.T) {
	payload := strings.Repeat("voiceapi ", 100) // 900 bytes
	term := &fakeTerminal{}
	p := newProgress(term, int64(len(payload)), "copying")
	var dst bytes.Buffer
	w := p.Writer(&dst)
	for i := 0; i < len(payload); i += 300 {
		if _, err := io.WriteString(w, payload[i:i+300]); err != nil {
			t.Fatal(err)
		}
	}
	// The bar counted every byte (what it draws is throttled: a fast copy shows its start
	// only, then the bar is cleared).
	if st := p.bar.State(); st.CurrentBytes != float64(len(payload)) || st.CurrentPercent != 1 {
		t.Errorf("bar state after the copy: %+v", st)
	}
	p.Done()
	p.Done() // a second call does nothing
	if dst.String() != payload {
		t.Fatalf("the data changed on its way: %d bytes", dst.Len())
	}
	shown := term.String()
	for _, want := range []string{"copying", "900 B", "\r"} {
		if !strings.Contains(shown, want) {
			t.Errorf("%q missing from the bar's output %q", want, shown)
		}
	}

	term = &fakeTerminal{}
	p = newProgress(term, -1, "reading")
	got, err := io.ReadAll(p.Reader(strings.NewReader(payload)))
	if st := p.bar.State(); st.CurrentBytes != float64(len(payload)) {
		t.Errorf("spinner state after the read: %+v", st)
	}
	p.Done()
	if err != nil || string(got) != payload {
		t.Fatalf("read %d bytes (%v)", len(got), err)
	}
	if !strings.Contains(term.String(), "reading") {
		t.Errorf("spinner output %q", term.String())
	}

	var quiet bytes.Buffer
	p = newProgress(&quiet, 10, "never shown")
	r := strings.NewReader("x")
	if p.Writer(&dst) != io.Writer(&dst) || p.Reader(r) != io.Reader(r) {
		t.Error("off a terminal, the writer or reader is wrapped")
	}
	p.Done()
	if quiet.Len() != 0 {
		t.Errorf("output off a terminal: %q", quiet.String())
	}
}
