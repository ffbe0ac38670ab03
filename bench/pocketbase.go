package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/internal/fakeagents"
)

// The PocketBase comparison (-mode pocketbase): the same agent body written to voiceapi and
// to a PocketBase collection shaped like an agent (a name and a JSON field holding the
// rest of the body), in one run, on loopback, beside the bare ceiling.

const (
	pbEmail    = "bench@voiceapi.local"
	pbPassword = "bench-password-1"
	pbRecords  = "/api/collections/agents/records"
)

// pbProc is a running `pocketbase serve`.
type pbProc struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has ended and been reaped
	addr   string
	token  string // a superuser's token
}

func (p *pbProc) url() string { return "http://" + p.addr }

// stop sends SIGINT and waits for PocketBase to exit, killing it after stopGrace. It
// needs the exited channel of startReaped: with none, stop waited on a nil channel
// forever, and since nothing called Wait the exited PocketBase stayed a zombie.
func (p *pbProc) stop() { (&serverProc{cmd: p.cmd, exited: p.exited}).stop() }

// startReaped starts cmd and reaps it in the background; the channel it returns is
// closed when the process has exited and Wait has returned.
func startReaped(cmd *exec.Cmd) (chan struct{}, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	return exited, nil
}

// startPocketBase runs PocketBase on dir with a superuser (created on a fresh directory),
// request logs off (voiceapi's go to /dev/null in this harness), and signs in.
func startPocketBase(bin, dir string) (*pbProc, error) {
	if out, err := exec.Command(bin, "superuser", "upsert", pbEmail, pbPassword, "--dir", dir).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pocketbase superuser upsert: %w\n%s", err, out)
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	p := &pbProc{addr: addr, cmd: exec.Command(bin, "serve", "--http", addr, "--dir", dir)}
	if p.exited, err = startReaped(p.cmd); err != nil {
		return nil, err
	}
	hc := &http.Client{Timeout: time.Second}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			p.stop()
			return nil, errors.New("pocketbase was not ready within a minute")
		}
		if resp, err := hc.Get(p.url() + "/api/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
	}
	c := p.client()
	out, err := c.do("POST", "/api/collections/_superusers/auth-with-password", mustJSON(map[string]string{"identity": pbEmail, "password": pbPassword}), http.StatusOK)
	if err != nil {
		p.stop()
		return nil, err
	}
	var auth struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(out, &auth); err != nil || auth.Token == "" {
		p.stop()
		return nil, fmt.Errorf("pocketbase sign-in: %v: %s", err, out)
	}
	p.token = auth.Token
	if _, err := p.client().do("PATCH", "/api/settings", mustJSON(map[string]any{"logs": map[string]any{"maxDays": 0}}), http.StatusOK); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

// client sends requests as the superuser, with "Bearer" as wrk's script sends it.
func (p *pbProc) client() *client {
	return &client{base: p.url(), token: p.token, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
}

// createCollection makes the agents collection: rules left empty, so only superusers
// reach it, as only a workspace's key reaches voiceapi's agents.
func (p *pbProc) createCollection() error {
	_, err := p.client().do("POST", "/api/collections", mustJSON(map[string]any{
		"name": "agents", "type": "base",
		"fields": []map[string]any{
			{"name": "name", "type": "text", "required": true, "max": 255},
			{"name": "config", "type": "json", "maxSize": 1 << 20},
		},
	}), http.StatusOK)
	return err
}

// pbBody is agentBody as a PocketBase record: the name, and the rest as the JSON field.
func pbBody(name string, tools int) map[string]any {
	cfg := fakeagents.Body(name, tools)
	delete(cfg, "name")
	return map[string]any{"name": name, "config": cfg}
}

// createRecords creates n records through the API, workers at a time, and returns their ids.
func (p *pbProc) createRecords(n, tools, workers int) ([]string, error) {
	c := p.client()
	ids := make([]string, n)
	err := parallel(n, workers, func(i int) error {
		out, err := c.do("POST", pbRecords, mustJSON(pbBody(fmt.Sprintf("Agent %d", i), tools)), http.StatusOK)
		if err != nil {
			return err
		}
		var rec struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(out, &rec); err != nil {
			return err
		}
		ids[i] = rec.ID
		return nil
	})
	return ids, err
}

// pbSize is the size of PocketBase's record database: data.db and its write-ahead log
// (empty after a clean stop, which checkpoints it).
func pbSize(dir string) int64 {
	var n int64
	for _, name := range []string{"data.db", "data.db-wal"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// voiceapiStats runs `voiceapi stats --json` on a stopped server's directory.
func voiceapiStats(bin, dir string) (*bolt.FileStats, error) {
	out, err := exec.Command(bin, "stats", "--data", dir, "--json").Output()
	if err != nil {
		return nil, fmt.Errorf("voiceapi stats: %w", err)
	}
	var st bolt.FileStats
	return &st, json.Unmarshal(out, &st)
}

// sizes are the database figures of both systems, empty and after the creates.
type sizes struct {
	records             int
	vEmpty, vFull       *bolt.FileStats
	vUpdated            *bolt.FileStats // after o.updates updates (nil without)
	pbUpdated           int64
	updates             int
	vTable              string // `voiceapi stats` of the full directory
	pbEmpty, pbFull     int64
	vAgents, pbIDs      []string
	vToken, vDir, pbDir string
}

// measureSizes creates o.records agents in a fresh directory of each system under dir,
// stopping each server before and after so that the files are measured at rest, then
// makes o.updates updates (none when 0).
func measureSizes(o options, dir string) (*sizes, error) {
	s, err := measureVoiceapiCreates(o, dir)
	if err != nil {
		return nil, err
	}
	if err := s.measurePocketBaseCreates(o, dir); err != nil {
		return nil, err
	}
	if o.updates > 0 {
		return s, measureUpdates(o, s)
	}
	return s, nil
}

// measureVoiceapiCreates is measureSizes' voiceapi half: the file empty, then after
// o.records creates through the API, in dir/voiceapi-data.
func measureVoiceapiCreates(o options, dir string) (*sizes, error) {
	s := &sizes{records: o.records, vDir: filepath.Join(dir, "voiceapi-data")}
	srv, err := startServer(o.bin, s.vDir, os.DevNull)
	if err != nil {
		return nil, err
	}
	s.vToken = srv.token
	srv.stop()
	if s.vEmpty, err = voiceapiStats(o.bin, s.vDir); err != nil {
		return nil, err
	}
	if srv, err = startServer(o.bin, s.vDir, os.DevNull); err != nil {
		return nil, err
	}
	logf("voiceapi: creating %d agents", o.records)
	st := &state{Token: s.vToken}
	err = seedAPI(&client{base: srv.url(), token: s.vToken, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.seeders}}}, st, o.records, 0, o.tools, o.seeders)
	srv.stop()
	if err != nil {
		return nil, err
	}
	s.vAgents = st.Agents
	if s.vFull, err = voiceapiStats(o.bin, s.vDir); err != nil {
		return nil, err
	}
	table, err := exec.Command(o.bin, "stats", "--data", s.vDir).Output()
	if err != nil {
		return nil, err
	}
	s.vTable = string(table)
	return s, nil
}

// measurePocketBaseCreates is measureSizes' PocketBase half, in dir/pb-data.
func (s *sizes) measurePocketBaseCreates(o options, dir string) error {
	s.pbDir = filepath.Join(dir, "pb-data")
	pb, err := startPocketBase(o.pocketbase, s.pbDir)
	if err != nil {
		return err
	}
	err = pb.createCollection()
	pb.stop()
	if err != nil {
		return err
	}
	s.pbEmpty = pbSize(s.pbDir)
	if pb, err = startPocketBase(o.pocketbase, s.pbDir); err != nil {
		return err
	}
	logf("pocketbase: creating %d records", o.records)
	s.pbIDs, err = pb.createRecords(o.records, o.tools, o.seeders)
	pb.stop()
	if err != nil {
		return err
	}
	s.pbFull = pbSize(s.pbDir)
	return nil
}

// runPocketBase measures the sizes, then restarts both systems on their directories and
// runs the wrk loads o.rounds times, interleaved, keeping each load's median round.
func runPocketBase(o options, work string) error {
	if o.pocketbase == "" {
		return errors.New("-mode pocketbase needs -pocketbase PATH, a PocketBase binary (docs/performance.md says how to build one)")
	}
	s, err := measureSizes(o, work)
	if err != nil {
		return err
	}
	if o.rounds == 0 {
		printSizes(s)
		return nil
	}
	names, runs, err := writeRounds(o, s, work)
	if err != nil {
		return err
	}
	printThroughput(o, names, runs)
	printSizes(s)
	return failedRounds(names, runs)
}

// The loads of writeRounds, in their order: the ceiling, then each write on voiceapi
// and on PocketBase.
const (
	loadCeiling = iota
	loadVoiceapiPut
	loadPocketBasePatch
	loadVoiceapiCreate
	loadPocketBaseCreate
)

// writeRounds starts both systems on the directories of s and the bare ceiling on
// voiceapi's bytes of an agent, and runs the write loads o.rounds times, interleaved.
// It returns the loads' names and each load's rounds, failed requests included (the
// caller shows them, then fails).
func writeRounds(o options, s *sizes, work string) ([]string, [][]result, error) {
	extra, err := profileFlags(&o)
	if err != nil {
		return nil, nil, err
	}
	srv, err := startServer(o.bin, s.vDir, os.DevNull, extra...)
	if err != nil {
		return nil, nil, err
	}
	defer srv.stop()
	pb, err := startPocketBase(o.pocketbase, s.pbDir)
	if err != nil {
		return nil, nil, err
	}
	defer pb.stop()
	c := &client{base: srv.url(), token: s.vToken, http: &http.Client{}}
	agentJSON, err := c.do("GET", "/api/v1/agents/"+s.vAgents[0], nil, http.StatusOK)
	if err != nil {
		return nil, nil, err
	}
	bare, err := newBaseline(s.vToken, agentJSON, agentJSON)
	if err != nil {
		return nil, nil, err
	}
	defer bare.close()

	loads := writeLoads(o, s, bare, srv, pb)
	names := make([]string, len(loads))
	for i, x := range loads {
		names[i] = x.l.Name
	}
	runs := make([][]result, len(loads))
	for round := range o.rounds {
		for i, x := range loads {
			logf("round %d/%d, wrk: %s (%d connections, %s)", round+1, o.rounds, x.l.Name, x.l.Connections, x.l.Duration)
			res, err := runWriteLoad(o, x, round, srv, pb, work)
			if err != nil {
				return nil, nil, err
			}
			if res.Non2xx+res.Errors > 0 {
				// Kept and shown (the table's last column), and the run fails at its end:
				// one round's timeouts need not throw away minutes of other rounds.
				logf("%s: %d non-2xx responses and %d socket errors", x.l.Name, res.Non2xx, res.Errors)
			}
			runs[i] = append(runs[i], res)
		}
	}
	return names, runs, nil
}

// writeLoad is one load of writeRounds and the server it runs against.
type writeLoad struct {
	l   load
	url string
}

// writeLoads are the loads of writeRounds, indexed by the load constants: the ceiling
// on bare, then each write on srv and on pb, with bodies of o.tools tools.
func writeLoads(o options, s *sizes, bare *baseline, srv *serverProc, pb *pbProc) []writeLoad {
	base := load{Connections: o.connections, Threads: o.threads, Duration: o.duration}
	with := func(f func(*load)) load { l := base; f(&l); return l }
	vBody := string(mustJSON(fakeagents.Body(nameMark, o.tools)))
	pBody := string(mustJSON(pbBody(nameMark, o.tools)))
	return []writeLoad{
		loadCeiling: {with(func(l *load) {
			l.Name, l.Method, l.Path, l.IDs, l.Token = "bare: GET agent", "GET", "/api/v1/agents/{id}", s.vAgents, s.vToken
		}), bare.url()},
		loadVoiceapiPut: {with(func(l *load) {
			l.Name, l.Method, l.Path, l.IDs, l.Token, l.Body = "voiceapi: PUT agent (full body)", "PUT", "/api/v1/agents/{id}", s.vAgents, s.vToken, vBody
		}), srv.url()},
		loadPocketBasePatch: {with(func(l *load) {
			l.Name, l.Method, l.Path, l.IDs, l.Token, l.Body = "pocketbase: PATCH record", "PATCH", pbRecords+"/{id}", s.pbIDs, pb.token, pBody
		}), pb.url()},
		loadVoiceapiCreate: {with(func(l *load) {
			l.Name, l.Method, l.Path, l.Token, l.Body = "voiceapi: create agent", "POST", "/api/v1/agents", s.vToken, vBody
		}), srv.url()},
		loadPocketBaseCreate: {with(func(l *load) {
			l.Name, l.Method, l.Path, l.Token, l.Body = "pocketbase: create record", "POST", pbRecords, pb.token, pBody
		}), pb.url()},
	}
}

// runWriteLoad runs x for one round with wrk, profiling voiceapi's loads, and measures
// the CPU of the server under load (none for the ceiling, served in this process).
func runWriteLoad(o options, x writeLoad, round int, srv *serverProc, pb *pbProc, work string) (result, error) {
	var saved <-chan error
	if x.url == srv.url() {
		pl := x.l
		pl.Name = fmt.Sprintf("%s round %d", x.l.Name, round+1)
		saved = profileDuring(o, pl)
	}
	pid := map[string]int{srv.url(): srv.cmd.Process.Pid, pb.url(): pb.cmd.Process.Pid}[x.url] // 0: the ceiling, in process
	res, err := runWrkCPU(x.url, x.l, work, pid)
	if saved != nil {
		if perr := <-saved; perr != nil {
			logf("profile of %s: %v", x.l.Name, perr)
		}
	}
	return res, err
}

// runWrkCPU is runWrk with the CPU time process pid used during the run (none when pid
// is 0).
func runWrkCPU(base string, l load, work string, pid int) (result, error) {
	if pid == 0 {
		return runWrk(base, l, work)
	}
	before, err := processCPU(pid)
	if err != nil {
		return result{}, err
	}
	res, err := runWrk(base, l, work)
	if err != nil {
		return res, err
	}
	after, err := processCPU(pid)
	res.CPU = after - before
	return res, err
}

// failedRounds names the loads that had non-2xx responses or socket errors in a round.
func failedRounds(names []string, runs [][]result) error {
	var failed []string
	for i, rs := range runs {
		for round, r := range rs {
			if r.Non2xx+r.Errors > 0 {
				failed = append(failed, fmt.Sprintf("%s, round %d: %d non-2xx, %d socket errors", names[i], round+1, r.Non2xx, r.Errors))
			}
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("rounds with failed requests (their figures are in the table, not to be quoted as they are):\n  %s", strings.Join(failed, "\n  "))
	}
	return nil
}

// printThroughput prints each load's median round (the loads in runPocketBase's order:
// the ceiling, voiceapi's and PocketBase's update, voiceapi's and PocketBase's create).
func printThroughput(o options, names []string, runs [][]result) {
	fmt.Printf("\nvoiceapi vs PocketBase, %s, %s, load average %s\n", time.Now().UTC().Format(time.RFC3339), pocketBaseVersion(o.pocketbase), loadAverage())
	fmt.Printf("agent body %d bytes (%d tools); wrk -t%d -c%d, %s a run, median of %d rounds, systems interleaved; voiceapi fsyncs each commit, PocketBase (SQLite WAL) does not\n\n",
		len(mustJSON(fakeagents.Body("Agent 0-0", o.tools))), o.tools, o.threads, o.connections, o.duration, o.rounds)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\treq/s\tp50\tp99\trounds (req/s)\tto ceiling\tCPU / request\tfailed requests\t")
	med := make([]result, len(names))
	for i := range names {
		med[i] = median(runs[i])
		var each []string
		failed := 0
		for _, r := range runs[i] {
			each = append(each, fmt.Sprintf("%.0f", r.RPS))
			failed += r.Non2xx + r.Errors
		}
		cpu := "-"
		if c := cpuPerRequest(runs[i]); c > 0 {
			cpu = fmtDur(c)
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s\t%.2f\t%s\t%d\t\n", names[i], med[i].RPS, fmtDur(med[i].P50), fmtDur(med[i].P99), strings.Join(each, ", "), med[i].RPS/med[loadCeiling].RPS, cpu, failed)
	}
	tw.Flush()
	fmt.Printf("\nvoiceapi / PocketBase: update %.2fx (goal ≥ 1.5x), create %.2fx (goal ≥ 1.5x)\n",
		med[loadVoiceapiPut].RPS/med[loadPocketBasePatch].RPS, med[loadVoiceapiCreate].RPS/med[loadPocketBaseCreate].RPS)
	cpuRatio := func(v, p []result) float64 {
		if c := cpuPerRequest(v); c > 0 {
			return float64(cpuPerRequest(p)) / float64(c)
		}
		return 0
	}
	fmt.Printf("CPU per request, PocketBase / voiceapi (median rounds): update %.2fx, create %.2fx\n", cpuRatio(runs[loadVoiceapiPut], runs[loadPocketBasePatch]), cpuRatio(runs[loadVoiceapiCreate], runs[loadPocketBaseCreate]))
}

func printSizes(s *sizes) {
	n := int64(s.records)
	fmt.Printf("\ndatabase after %d creates through the API, no updates, servers stopped:\n", s.records)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "system\tfile before\tfile after\tfile / record\tgrowth / record\tpages owned / record\tdata / record\t")
	v0, v1 := s.vEmpty, s.vFull
	fmt.Fprintf(tw, "voiceapi (voiceapi.db)\t%d\t%d\t%d\t%d\t%d\t%d\t\n", v0.FileSize, v1.FileSize, v1.FileSize/n, (v1.FileSize-v0.FileSize)/n,
		(v1.Total.AllocBytes-v0.Total.AllocBytes)/n, (v1.Total.DataBytes-v0.Total.DataBytes)/n)
	fmt.Fprintf(tw, "pocketbase (data.db)\t%d\t%d\t%d\t%d\t-\t-\t\n", s.pbEmpty, s.pbFull, s.pbFull/n, (s.pbFull-s.pbEmpty)/n)
	tw.Flush()
	fmt.Printf("voiceapi / PocketBase, growth per record: %.1fx\n", float64(v1.FileSize-v0.FileSize)/float64(max(1, s.pbFull-s.pbEmpty)))
	fmt.Printf("voiceapi file growth per agent: %d bytes (goal ≤ 8 KB)\n", (v1.FileSize-v0.FileSize)/n)
	fmt.Printf("\nvoiceapi stats after the %d creates:\n%s", s.records, s.vTable)
	printUpdatedSizes(s)
}

// median is the round with the median throughput.
func median(rs []result) result {
	sorted := append([]result(nil), rs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].RPS < sorted[j].RPS })
	return sorted[len(sorted)/2]
}

// pocketBaseVersion names the binary with what its --version prints, for the report (a
// build of examples/base prints "(untracked)": the docs name the version built).
func pocketBaseVersion(bin string) string {
	out, _ := exec.Command(bin, "--version").Output()
	return fmt.Sprintf("%s (%s)", bin, bytes.TrimSpace(out))
}
