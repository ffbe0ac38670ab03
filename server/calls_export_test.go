package server_test

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/openapi"
	"github.com/voiceapi/voiceapi/server"
	"github.com/voiceapi/voiceapi/validate"
)

// exportGet starts GET /api/v1/calls/export?query; the caller reads and closes the body.
func exportGet(t testing.TB, base, token, query string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/api/v1/calls/export?"+query, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// exportNDJSON reads a whole NDJSON export: the ids in order and the trailers.
func exportNDJSON(t testing.TB, base, token, query string) ([]string, http.Header) {
	t.Helper()
	resp := exportGet(t, base, token, query)
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: %d %s", query, resp.StatusCode, b)
	}
	var ids []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var c data.Call
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		ids = append(ids, c.ID)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return ids, resp.Trailer
}

func TestCallExport(t *testing.T) {
	c := newSearchEnv(t)
	var all, cancels, agentA []string
	for i := range 150 {
		body := map[string]any{"transcript": said(fmt.Sprintf("call %d", i)), "variables": map[string]any{"n": i}}
		if i%3 == 0 {
			body["agent_id"] = c.agentB
		}
		if i%5 == 0 {
			body["transcript"] = said("hello", fmt.Sprintf("please cancel %d", i))
		}
		id := str(c.register(t, body), "id")
		all = append([]string{id}, all...)
		if i%5 == 0 {
			cancels = append([]string{id}, cancels...)
		}
		if i%3 != 0 {
			agentA = append([]string{id}, agentA...)
		}
	}
	got, tr := exportNDJSON(t, c.URL, c.Owner.Token, "")
	if !slices.Equal(got, all) || tr.Get(server.TrailerExportCount) != "150" || tr.Get(server.TrailerExportCursor) != "" {
		t.Fatalf("export: %d calls (want 150, newest first: %v), trailers %v", len(got), slices.Equal(got, all), tr)
	}
	if got, _ := exportNDJSON(t, c.URL, c.Owner.Token, "q=cancel"); !slices.Equal(got, cancels) {
		t.Errorf("export with q: %v, want %v", got, cancels)
	}
	if got, _ := exportNDJSON(t, c.URL, c.Owner.Token, "agent_id="+c.agentA+"&q=call"); len(got) != 80 {
		t.Errorf("export with agent_id and q: %d calls, want 80", len(got))
	}
	limited := c.srv.Member("limited@example.com", c.ws, data.RoleMember, []string{data.ModuleCallHistory}, []string{c.agentA})
	if got, _ := exportNDJSON(t, c.URL, limited.Token, ""); !slices.Equal(got, agentA) {
		t.Errorf("a member limited to agent A exports %d calls, want %d", len(got), len(agentA))
	}

	// Resuming: chunks of limit calls, each ending with the cursor of the next.
	var chunks []string
	query := "limit=40"
	for n := 0; ; n++ {
		got, tr := exportNDJSON(t, c.URL, c.Owner.Token, query)
		chunks = append(chunks, got...)
		cursor := tr.Get(server.TrailerExportCursor)
		if cursor == "" {
			break
		}
		if len(got) != 40 || n > 5 {
			t.Fatalf("chunk %d: %d calls", n, len(got))
		}
		query = "limit=40&cursor=" + url.QueryEscape(cursor)
	}
	if !slices.Equal(chunks, all) {
		t.Errorf("resumed chunks: %d calls, want the 150 once each in order", len(chunks))
	}
}

func TestCallExportCSV(t *testing.T) {
	c := newSearchEnv(t)
	c.register(t, map[string]any{"transcript": said("Hi, \"quoted\", and commas", "second line"),
		"variables": map[string]any{"customer": "Ada"}, "from_number": "+14155550123"})
	resp := exportGet(t, c.URL, c.Owner.Token, "format=csv")
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Fatalf("status %d, %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	rows, err := csv.NewReader(resp.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || !slices.Equal(rows[0], server.CallCSVColumns) {
		t.Fatalf("rows: %q", rows)
	}
	row := map[string]string{}
	for i, col := range rows[0] {
		row[col] = rows[1][i]
	}
	if row["transcript"] != "agent: Hi, \"quoted\", and commas\nuser: second line" || row["variables"] != `{"customer":"Ada"}` ||
		row["analysis"] != "" || row["from_number"] != "+14155550123" || row["status"] != "registered" || row["duration_ms"] != "" {
		t.Errorf("row: %v", row)
	}
	if resp.Trailer.Get(server.TrailerExportCount) != "1" {
		t.Errorf("trailers: %v", resp.Trailer)
	}
}

func TestCallExportBadInput(t *testing.T) {
	c := newSearchEnv(t)
	c.register(t, map[string]any{})
	for _, tc := range []struct {
		query  string
		fields []string // nil: 200
	}{
		{"format=ndjson", nil},
		{"format=csv", nil},
		{"format=xml", []string{"format"}},
		{"limit=1", nil},
		{"limit=" + strconv.Itoa(validate.MaxExportLimit), nil},
		{"limit=0", []string{"limit"}},
		{"limit=" + strconv.Itoa(validate.MaxExportLimit+1), []string{"limit"}},
		{"limit=ten", []string{"limit"}},
		{"sort=created_at", []string{"sort"}},
		{"q=cancel&sort=relevance", []string{"sort"}},
		{"q=", []string{"q"}},
		{"q=" + url.QueryEscape(strings.Repeat("x ", 5000)), []string{"q"}},
		{"cursor=bogus", []string{"cursor"}},
		{"status=gone&direction=up&from=yesterday", []string{"status", "direction", "from"}},
		{"from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", []string{"to"}},
	} {
		name := tc.query
		if len(name) > 40 {
			name = name[:40] + "…"
		}
		t.Run(name, func(t *testing.T) {
			r := c.do("GET", "/api/v1/calls/export?"+tc.query, c.Owner.Token, nil)
			if tc.fields == nil {
				expect(t, r, 200)
				return
			}
			expectFields(t, r, tc.fields...)
		})
	}
}

// TestCallExportSlowReader: a consumer that stops reading does not make the server hold
// the export in memory: it waits on the connection with at most a batch in hand.
func TestCallExportSlowReader(t *testing.T) {
	c := newSearchEnv(t)
	long := strings.Repeat("word ", validate.MaxTranscriptContent/5)
	const calls = 500 // 500 calls of 60 KB: a 30 MB export
	for range calls {
		c.register(t, map[string]any{"transcript": said(long, long, long, long, long, long)})
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	resp := exportGet(t, c.URL, c.Owner.Token, "format=csv")
	defer resp.Body.Close()
	buf := make([]byte, 4096)
	read := 0
	for read < 256<<10 { // a little, then nothing for a while
		n, err := resp.Body.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		read += n
		time.Sleep(time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // the server runs into the full connection
	during := heap()
	if grew := int64(during) - int64(before); grew > 12<<20 {
		t.Errorf("the heap grew by %d MB while the consumer did not read (export: 30 MB)", grew>>20)
	}
	rest, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if total := int64(read) + rest; total < calls*60_000 || resp.Trailer.Get(server.TrailerExportCount) != strconv.Itoa(calls) {
		t.Errorf("the export ended with %v after %d bytes", resp.Trailer, total)
	}
	t.Logf("heap before %d MB, while stalled %d MB", before>>20, during>>20)
}

// TestCallCSVColumnsDocumented holds the CSV header row to the OpenAPI document's.
func TestCallCSVColumnsDocumented(t *testing.T) {
	if !slices.Equal(server.CallCSVColumns, openapi.CSVColumns()) {
		t.Errorf("CSV columns %v, documented %v", server.CallCSVColumns, openapi.CSVColumns())
	}
}

// TestCallExportOutlastsReadTimeout: an export that streams for longer than the server's
// read timeout is not cut (the read deadline, not moved by a GET, used to cancel the
// request's context when it passed).
func TestCallExportOutlastsReadTimeout(t *testing.T) {
	e := newEnv(t)
	ws := e.Owner.WorkspaceID
	agent := e.newAgent(ws, nil)
	const calls = 400 // 400 calls of 24 KB: more than the connection buffers, so the server waits on the reader
	for range calls {
		expect(t, e.do("POST", "/api/v1/calls", e.Owner.Token, map[string]any{"agent_id": agent, "direction": "web",
			"transcript": said(strings.Repeat("word ", 2000), strings.Repeat("word ", 2000), strings.Repeat("word ", 800))}), 201)
	}
	timeouts := server.Timeouts{ReadHeader: time.Second, Read: 150 * time.Millisecond, Write: 5 * time.Second, Idle: time.Second}
	h := cli.NewServer(e.DB, slog.New(slog.NewTextHandler(io.Discard, nil)), func(c *server.Config) { c.Timeouts = timeouts }).Handler()
	hs := httptest.NewUnstartedServer(h)
	hs.Config.ReadTimeout, hs.Config.WriteTimeout = timeouts.Read, timeouts.Write
	hs.Start()
	defer hs.Close()
	resp := exportGet(t, hs.URL, e.Owner.Token, "format=ndjson")
	defer resp.Body.Close()
	buf := make([]byte, 64<<10)
	for start := time.Now(); ; { // a slow reader: the export lasts well past the read timeout
		_, err := resp.Body.Read(buf)
		if err == io.EOF {
			if time.Since(start) < 3*timeouts.Read {
				t.Fatalf("the export took %s: too fast to outlast the read timeout", time.Since(start))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := resp.Trailer.Get(server.TrailerExportCount); got != strconv.Itoa(calls) || resp.Trailer.Get(server.TrailerExportCursor) != "" {
		t.Errorf("trailers %v: the export was cut", resp.Trailer)
	}
}
