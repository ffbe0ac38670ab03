package cli

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
)

// TestCallsExport: `voiceapi calls export` streams every call in chunks (each resuming
// from the previous one's cursor), in NDJSON or CSV with one header row, with filters,
// and draws its counter on a terminal only.
func TestCallsExport(t *testing.T) {
	s := newIACServer(t)
	ctx := context.Background()
	a, _, err := s.c.Agents.Create(ctx, client.AgentInput{Name: ptrTo("Support")})
	if err != nil {
		t.Fatal(err)
	}
	var want, cancels []string
	for i := range 23 {
		text := fmt.Sprintf("call number %d", i)
		if i%4 == 0 {
			text += ", cancel it"
		}
		c, _, err := s.c.Calls.Register(ctx, data.CallCreate{AgentID: a.ID, Direction: data.DirectionWeb,
			Transcript: []data.TranscriptItem{{Role: "user", Content: text}}})
		if err != nil {
			t.Fatal(err)
		}
		want = append([]string{c.ID}, want...)
		if i%4 == 0 {
			cancels = append([]string{c.ID}, cancels...)
		}
	}
	defer func(n int) { exportChunk = n }(exportChunk)
	exportChunk = 5 // 23 calls: five requests

	out, errOut, err := run(t, "", "calls", "export", "--server", s.url, "--token", s.token)
	if err != nil {
		t.Fatal(err, errOut)
	}
	var got []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var c data.Call
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		got = append(got, c.ID)
	}
	if !slices.Equal(got, want) || !strings.Contains(errOut, "exported 23 calls") {
		t.Errorf("ndjson export: %d calls (%q)", len(got), errOut)
	}

	file := filepath.Join(t.TempDir(), "calls.csv")
	_, errOut, err = runOnTerminal(t, "calls", "export", "--server", s.url, "--token", s.token, "--format", "csv", "--q", "cancel", "--out", file)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(file)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != len(cancels)+1 || rows[0][0] != "id" || rows[1][0] != cancels[0] {
		t.Errorf("csv export: %v rows %v", err, rows)
	}
	if !strings.Contains(errOut, "exporting calls") || !strings.Contains(errOut, "exported 6 calls") {
		t.Errorf("no counter on the terminal: %q", errOut)
	}
	// One call is counted as one.
	if _, errOut, err := run(t, "", "calls", "export", "--server", s.url, "--token", s.token, "--q", "17"); err != nil || !strings.Contains(errOut, "exported 1 call\n") {
		t.Errorf("export of one call: %v %q", err, errOut)
	}
	if _, _, err := run(t, "", "calls", "export", "--server", s.url, "--token", s.token, "--out", file); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("an existing --out: %v", err)
	}
	if _, _, err := run(t, "", "calls", "export", "--server", s.url, "--token", s.token, "--format", "xml"); err == nil || !strings.Contains(err.Error(), "format") {
		t.Errorf("a bad format: %v", err)
	}
	if _, _, err := run(t, "", "calls", "export", "--server", s.url, "--token", ""); err == nil || !strings.Contains(err.Error(), "VOICEAPI_TOKEN") {
		t.Errorf("no token: %v", err)
	}
}
