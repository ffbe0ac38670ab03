package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/internal/fakeagents"
)

// TestPocketBaseBody: the record carries the agent body's name as its own field and the
// rest, unchanged, as its JSON field, so both systems store the same bytes.
func TestPocketBaseBody(t *testing.T) {
	agent := fakeagents.Body("Agent 1", 10)
	rec := pbBody("Agent 1", 10)
	if rec["name"] != "Agent 1" || len(rec) != 2 {
		t.Fatalf("record fields: %v", rec)
	}
	cfg := rec["config"].(map[string]any)
	if _, ok := cfg["name"]; ok {
		t.Error("the name is also in the JSON field")
	}
	delete(agent, "name")
	a, _ := json.Marshal(agent)
	c, _ := json.Marshal(cfg)
	if string(a) != string(c) {
		t.Errorf("config differs from the agent body:\n%s\n%s", a, c)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		rps  []float64
		want float64
	}{{[]float64{5}, 5}, {[]float64{9, 1, 5}, 5}, {[]float64{3, 1, 2, 4}, 3}} {
		var rs []result
		for _, r := range tc.rps {
			rs = append(rs, result{RPS: r})
		}
		if got := median(rs).RPS; got != tc.want {
			t.Errorf("median of %v: %v, want %v", tc.rps, got, tc.want)
		}
		if rs[0].RPS != tc.rps[0] {
			t.Errorf("median reordered its input")
		}
	}
}

// stopWithin runs stop and fails the test if it has not returned within d: the harness
// once waited forever stopping PocketBase.
func stopWithin(t *testing.T, d time.Duration, stop func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("stop did not return within %s", d)
	}
}

// TestPocketBaseStopReaps: stop returns once the process has exited, and the process is
// reaped (no zombie left), both when it obeys the interrupt and when it must be killed.
func TestPocketBaseStopReaps(t *testing.T) {
	defer func(g time.Duration) { stopGrace = g }(stopGrace)
	stopGrace = 200 * time.Millisecond
	for name, args := range map[string][]string{
		"interrupted": {"sleep", "60"},
		"killed":      {"sh", "-c", `trap "" INT; while :; do sleep 0.05; done`},
	} {
		t.Run(name, func(t *testing.T) {
			p := &pbProc{cmd: exec.Command(args[0], args[1:]...)}
			var err error
			if p.exited, err = startReaped(p.cmd); err != nil {
				t.Skipf("cannot run %s: %v", args[0], err)
			}
			time.Sleep(100 * time.Millisecond) // let sh install its trap
			stopWithin(t, 10*time.Second, p.stop)
			if p.cmd.ProcessState == nil {
				t.Fatal("the process was not waited for")
			}
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", p.cmd.Process.Pid)); err == nil {
				t.Errorf("process %d is still in the process table (a zombie)", p.cmd.Process.Pid)
			}
		})
	}
}

// TestPocketBaseStartStop runs what hung: a fresh PocketBase, its collection, stop, and
// a second start on the same directory. It needs a PocketBase binary in
// VOICEAPI_BENCH_POCKETBASE (docs/performance.md says how to build one).
func TestPocketBaseStartStop(t *testing.T) {
	bin := os.Getenv("VOICEAPI_BENCH_POCKETBASE")
	if bin == "" {
		t.Skip("VOICEAPI_BENCH_POCKETBASE is not set")
	}
	dir := t.TempDir()
	pb, err := startPocketBase(bin, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := pb.createCollection(); err != nil {
		pb.stop()
		t.Fatal(err)
	}
	stopWithin(t, time.Minute, pb.stop)
	if pb.cmd.ProcessState == nil || pbSize(dir) == 0 {
		t.Fatalf("after stop: state %v, data.db %d bytes", pb.cmd.ProcessState, pbSize(dir))
	}
	if pb, err = startPocketBase(bin, dir); err != nil {
		t.Fatal(err)
	}
	ids, err := pb.createRecords(3, 2, 2)
	stopWithin(t, time.Minute, pb.stop)
	if err != nil || len(ids) != 3 || ids[0] == "" {
		t.Fatalf("records after a restart: %v, %v", ids, err)
	}
}

// TestFailedRounds: a round with socket errors or non-2xx answers fails the run (after
// the table is printed), naming the load and the round; clean rounds do not.
func TestFailedRounds(t *testing.T) {
	names := []string{"a", "b"}
	if err := failedRounds(names, [][]result{{{RPS: 1}, {RPS: 2}}, {{RPS: 3}}}); err != nil {
		t.Errorf("clean rounds: %v", err)
	}
	err := failedRounds(names, [][]result{{{RPS: 1}}, {{RPS: 3}, {RPS: 2, Errors: 28}, {Non2xx: 1}}})
	if err == nil || !strings.Contains(err.Error(), "b, round 2: 0 non-2xx, 28 socket errors") || !strings.Contains(err.Error(), "b, round 3: 1 non-2xx") {
		t.Errorf("failed rounds: %v", err)
	}
}

// TestWriteLoads: each load of writeRounds sits at its constant's index (the summary and
// the table read them by index) and runs against its own system with that system's ids,
// token and body.
func TestWriteLoads(t *testing.T) {
	s := &sizes{vAgents: []string{"agent_1"}, pbIDs: []string{"rec_1"}, vToken: "vtok"}
	bare, srv, pb := &baseline{addr: "bare:1"}, &serverProc{addr: "voiceapi:2"}, &pbProc{addr: "pb:3", token: "pbtok"}
	o := options{connections: 8, threads: 2, duration: time.Second, tools: 3}
	loads := writeLoads(o, s, bare, srv, pb)
	if len(loads) != 5 {
		t.Fatalf("%d loads, want 5", len(loads))
	}
	for i, want := range []struct {
		name, method, url, token string
		ids                      []string
		body                     bool
	}{
		loadCeiling:          {"bare: GET agent", "GET", bare.url(), "vtok", s.vAgents, false},
		loadVoiceapiPut:      {"voiceapi: PUT agent (full body)", "PUT", srv.url(), "vtok", s.vAgents, true},
		loadPocketBasePatch:  {"pocketbase: PATCH record", "PATCH", pb.url(), "pbtok", s.pbIDs, true},
		loadVoiceapiCreate:   {"voiceapi: create agent", "POST", srv.url(), "vtok", nil, true},
		loadPocketBaseCreate: {"pocketbase: create record", "POST", pb.url(), "pbtok", nil, true},
	} {
		got := loads[i]
		if got.l.Name != want.name || got.l.Method != want.method || got.url != want.url || got.l.Token != want.token ||
			fmt.Sprint(got.l.IDs) != fmt.Sprint(want.ids) || (got.l.Body != "") != want.body {
			t.Errorf("load %d = %+v at %s, want %+v", i, got.l, got.url, want)
		}
		if got.l.Connections != 8 || got.l.Threads != 2 || got.l.Duration != time.Second {
			t.Errorf("load %d: %d connections, %d threads, %s; want o's 8, 2, 1s", i, got.l.Connections, got.l.Threads, got.l.Duration)
		}
	}
}
