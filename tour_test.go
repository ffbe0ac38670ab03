package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tour (docs/tour.md, issue 16) is run as written: its sh blocks, in order, in one
// bash, from the root of the repository, each block's output compared with the output
// block that follows it in the document once volatile values (ids, tokens, secrets,
// hashes, times, ports) are masked the same way on both sides. A sh block without an
// output block must print nothing. -update-tour writes the outputs of the run into the
// document instead.
var updateTour = flag.Bool("update-tour", false, "write the tour's outputs into docs/tour.md")

const tourPath = "docs/tour.md"

// tourBlock is one sh block of the tour and the output block after it, if any.
type tourBlock struct {
	line     int    // of the opening fence, for messages
	script   string // the commands
	want     string // the documented output
	hasWant  bool
	wantFrom int // byte offsets of the output block's content in the document, for -update-tour
	wantTo   int
}

var fence = regexp.MustCompile("(?m)^```([a-z]*)\n((?s:.*?))^```\n")

// parseTour finds the sh blocks and their output blocks: an output block is the fenced
// block right after a sh block, with only blank lines between them.
func parseTour(doc string) []tourBlock {
	var blocks []tourBlock
	matches := fence.FindAllStringSubmatchIndex(doc, -1)
	for i, m := range matches {
		if doc[m[2]:m[3]] != "sh" {
			continue
		}
		b := tourBlock{line: strings.Count(doc[:m[0]], "\n") + 1, script: doc[m[4]:m[5]]}
		if i+1 < len(matches) {
			next := matches[i+1]
			if strings.TrimSpace(doc[m[1]:next[0]]) == "" && doc[next[2]:next[3]] != "sh" {
				b.hasWant, b.want, b.wantFrom, b.wantTo = true, doc[next[4]:next[5]], next[4], next[5]
			}
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// tourMarker ends each block's output in the run's combined output.
const tourMarker = "\n@@voiceapi-tour-block-end@@\n"

// runTour runs the blocks in one bash and returns each block's output.
func runTour(t *testing.T, blocks []tourBlock) []string {
	t.Helper()
	var script strings.Builder
	// -e: a failing command stops the tour, as it would stop a reader.
	script.WriteString("set -eo pipefail\n")
	for _, b := range blocks {
		script.WriteString(b.script)
		script.WriteString("\nprintf '\\n@@voiceapi-tour-block-end@@\\n'\n")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	// The tour's server and receiver run in the background: in their own process group,
	// they are all stopped when the test ends, whatever block it failed at.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	err = cmd.Wait()
	parts := strings.Split(out.String(), tourMarker)
	if err != nil {
		failed := blocks[min(len(parts)-1, len(blocks)-1)]
		t.Fatalf("the tour stopped (%v) in the block at %s:%d:\n%s\noutput:\n%s", err, tourPath, failed.line, failed.script, parts[len(parts)-1])
	}
	return parts[:len(blocks)]
}

// tourMasks replace what differs from run to run. Ids are numbered in order of first
// appearance, so a run where the number's inbound_agent_id is not the agent created
// before still fails.
var tourMasks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"(next_cursor|prev_cursor)":"[^"]*"`), `"$1":"<cursor>"`},
	{regexp.MustCompile(`(?m)^(Date|Content-Length|X-Request-Id|X-Ratelimit-Reset): .*$`), "$1: <…>"},
	{regexp.MustCompile(`\b(\d+)\|[A-Za-z0-9]{20,}`), "$1|<token>"},
	{regexp.MustCompile(`whsec_[A-Za-z0-9+/]+=*`), "whsec_<secret>"},
	{regexp.MustCompile(`(?m)^(  password: +)\S+$`), "$1<password>"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`), "<time>"},
	{regexp.MustCompile(`\b\d{4}-\d\d-\d\d\b`), "<date>"},
	{regexp.MustCompile(`\b[0-9a-f]{64}\b`), "<sha256>"},
	{regexp.MustCompile(`\b[0-9a-f]{24}\b`), "<hex>"},
	{regexp.MustCompile(`127\.0\.0\.1:\d+`), "127.0.0.1:<port>"},
}

var tourID = regexp.MustCompile(`\b([a-z]+)_[0-9A-HJKMNP-TV-Z]{26}\b`)

// maskTour masks every output of one run; ids are numbered across the whole run.
func maskTour(outputs []string) []string {
	ids := map[string]string{}
	perPrefix := map[string]int{}
	masked := make([]string, len(outputs))
	for i, s := range outputs {
		s = strings.ReplaceAll(s, "\r", "")
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
			lines = append(lines, strings.TrimRight(l, " \t"))
		}
		s = strings.Join(lines, "\n")
		for _, m := range tourMasks {
			s = m.re.ReplaceAllString(s, m.with)
		}
		s = tourID.ReplaceAllStringFunc(s, func(id string) string {
			if _, ok := ids[id]; !ok {
				prefix := id[:strings.IndexByte(id, '_')]
				perPrefix[prefix]++
				ids[id] = prefix + "_#" + strconv.Itoa(perPrefix[prefix])
			}
			return ids[id]
		})
		masked[i] = s
	}
	return masked
}

func TestTour(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq", "timeout", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("VOICEAPI_TOUR_REQUIRED") != "" {
				t.Fatalf("the tour needs %s (VOICEAPI_TOUR_REQUIRED is set: not skipping)", tool)
			}
			t.Skipf("the tour needs %s: not found", tool)
		}
	}
	raw, err := os.ReadFile(tourPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	blocks := parseTour(doc)
	if len(blocks) < 10 {
		t.Fatalf("%s: only %d sh blocks found", tourPath, len(blocks))
	}
	got := runTour(t, blocks)
	if *updateTour {
		writeTourOutputs(t, doc, blocks, got)
		return
	}
	wants := make([]string, len(blocks))
	for i, b := range blocks {
		wants[i] = b.want
	}
	gotMasked, wantMasked := maskTour(got), maskTour(wants)
	for i, b := range blocks {
		if gotMasked[i] != wantMasked[i] {
			t.Errorf("%s:%d: the output of\n%s\nno longer matches the document (masked):\n--- documented\n%s\n--- now\n%s\n(go test -run TestTour . -update-tour writes the new outputs into %s)",
				tourPath, b.line, b.script, wantMasked[i], gotMasked[i], tourPath)
		}
	}
}

// writeTourOutputs puts each block's output into its output block, from the end of the
// document backwards so the offsets stay valid.
func writeTourOutputs(t *testing.T, doc string, blocks []tourBlock, got []string) {
	t.Helper()
	for i := len(blocks) - 1; i >= 0; i-- {
		b := blocks[i]
		out := strings.TrimSpace(strings.ReplaceAll(got[i], "\r", ""))
		if !b.hasWant {
			if out != "" {
				t.Errorf("%s:%d: the block prints output but has no output block after it; add one:\n%s", tourPath, b.line, out)
			}
			continue
		}
		doc = doc[:b.wantFrom] + out + "\n" + doc[b.wantTo:]
	}
	if t.Failed() {
		return
	}
	if err := os.WriteFile(tourPath, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTourMasks: volatile values are masked alike on both sides, while the relations
// between ids and every other value still count.
func TestTourMasks(t *testing.T) {
	a, b := "agt_01M87NFKN9FNJCEJWNE4Z7HP3B", "agt_01M87NFM7Z22HMZFAW949J95WK"
	run1 := maskTour([]string{
		`{"id":"` + a + `","created_at":"2026-11-24T20:55:42.505Z","token":"2|7uonXmYadV0eFHjbyBK9Q5U8GyhL9RprTpDHj6pMNpaxg0eL"}`,
		"HTTP/1.1 201 Created\r\nDate: Tue, 24 Nov 2026 20:55:42 GMT\r\nEtag: \"54629943ff410cff1d340757\"\r\n",
		`{"inbound_agent_id":"` + a + `","url":"http://127.0.0.1:38999/x","secret":"whsec_iFSjceJ3unpVa/gaExiYbt0M4NZ+1a4wb6bMDgHgwOg="}`,
	})
	run2 := maskTour([]string{
		`{"id":"` + b + `","created_at":"2027-01-02T03:04:05.000Z","token":"2|HEECnFGtX3wQA9c7sSoSB4006TPnaJWmbGAJz6UGU700uIaz"}`,
		"HTTP/1.1 201 Created\nDate: Sat, 02 Jan 2027 03:04:05 GMT\nEtag: \"0123456789abcdef01234567\"\n",
		`{"inbound_agent_id":"` + b + `","url":"http://127.0.0.1:41234/x","secret":"whsec_AAAAceJ3unpVa/gaExiYbt0M4NZ+1a4wb6bMDgHgwOg="}`,
	})
	for i := range run1 {
		if run1[i] != run2[i] {
			t.Errorf("output %d: masked differently:\n%s\n%s", i, run1[i], run2[i])
		}
	}
	// The number bound to another agent than the one created: a difference.
	other := maskTour([]string{`{"id":"` + a + `"}`, `{"inbound_agent_id":"` + b + `"}`})
	same := maskTour([]string{`{"id":"` + a + `"}`, `{"inbound_agent_id":"` + a + `"}`})
	if other[1] == same[1] {
		t.Errorf("ids are not told apart: %q", other[1])
	}
	// A token's key id and any other value are kept.
	if got := maskTour([]string{`"token":"3|HEECnFGtX3wQA9c7sSoSB4006TPnaJWmbGAJz6UGU700uIaz","calls":1`})[0]; got != `"token":"3|<token>","calls":1` {
		t.Errorf("masked %q", got)
	}
}

func TestParseTour(t *testing.T) {
	doc := "# t\n\n```sh\necho a\n```\n\n```json\na\n```\n\nprose\n\n```sh\nX=1\n```\n\nprose\n\n```text\nnot an output\n```\n```sh\necho b\n```\n```text\nb\n```\n"
	blocks := parseTour(doc)
	if len(blocks) != 3 {
		t.Fatalf("%d blocks", len(blocks))
	}
	for i, want := range []struct {
		script, out string
		has         bool
	}{{"echo a\n", "a\n", true}, {"X=1\n", "", false}, {"echo b\n", "b\n", true}} {
		b := blocks[i]
		if b.script != want.script || b.want != want.out || b.hasWant != want.has {
			t.Errorf("block %d: %+v", i, b)
		}
	}
}
