// Command bench is voiceapi's load harness (docs/performance.md). It drives a real
// `voiceapi serve` with wrk and compares it with a bare net/http handler that serves the
// same bytes from memory behind the same token check: the ceiling of this HTTP stack.
//
//	go run ./bench                       # table: every scenario, fresh data directory
//	go run ./bench -mode groupcommit     # full-body PUT at 1 and at 32 clients, fsync on
//	go run ./bench -mode seed -data DIR -calls 1000000   # build a large directory offline
//	go run ./bench -data DIR             # table against that directory (start-up, RSS)
//	go run ./bench -mode pocketbase -pocketbase PATH   # the same writes against PocketBase
//	go run ./bench -mode targets -pocketbase PATH      # issue 17's figures against their goals
//	go run ./bench -postgres -replicas 3  # bbolt, PostgreSQL x1 and x3 in one table
//	go run ./bench -database-url URL     # the same on an empty database of yours
//
// Every load is bounded by -duration; the harness only uses loopback addresses.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/voiceapi/voiceapi/internal/fakeagents"
)

type options struct {
	mode        string
	dataDir     string
	bin         string
	agents      int
	extras      extras
	calls       int
	tools       int
	duration    time.Duration
	connections int
	threads     int
	seeders     int
	keepLogs    bool
	profileDir  string
	pocketbase  string
	records     int
	updates     int
	rounds      int
	// bigRecords are -mode targets' agents before the updates (the fourth figure).
	bigRecords int
	// databaseURL and postgres select the backends table (runBackends): bbolt beside
	// PostgreSQL with 1 and with replicas replicas, on the database at databaseURL or on
	// a cluster the harness starts.
	databaseURL string
	postgres    bool
	replicas    int
	dbPoolSize  int
	// only, when set, keeps the backends table's scenarios whose name contains it.
	only string
}

func main() {
	var o options
	flag.StringVar(&o.mode, "mode", "table", "table | groupcommit | seed | seedbulk (calls straight into storage, for read benchmarks) | pocketbase | targets (issue 17's figures, one summary)")
	flag.StringVar(&o.dataDir, "data", "", "data directory: one made by -mode seed, or empty for a fresh temporary one (-mode targets: the calls directory, seeded there unless it holds -calls calls already)")
	flag.StringVar(&o.bin, "bin", "", "voiceapi binary; built from the module when empty")
	flag.IntVar(&o.agents, "agents", 100, "agents to seed (a list page is 100)")
	flag.IntVar(&o.calls, "calls", 2000, "calls to seed (-mode targets: 1000000 unless set)")
	flag.IntVar(&o.tools, "tools", 10, "tools in each seeded agent and PUT body")
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "length of each wrk run")
	flag.IntVar(&o.connections, "c", 32, "concurrent connections")
	flag.IntVar(&o.threads, "t", 2, "wrk threads")
	flag.IntVar(&o.seeders, "seeders", 64, "concurrent writers while seeding")
	flag.BoolVar(&o.keepLogs, "keep-logs", false, "keep the server's request log (else it goes to /dev/null)")
	flag.StringVar(&o.profileDir, "profile", "", "save a CPU profile of voiceapi during each of its runs into this directory (-mode pocketbase: each round's)")
	flag.StringVar(&o.pocketbase, "pocketbase", "", "PocketBase binary for -mode pocketbase, and for -mode targets' figures 1, 2 and 4")
	flag.IntVar(&o.records, "records", 1000, "-mode pocketbase and targets: agents (records) created in each fresh database before its size is measured")
	flag.IntVar(&o.updates, "updates", 0, "-mode pocketbase: full-body updates (voiceapi PUT, PocketBase PATCH) spread over the created records, after which the sizes are measured again (-mode targets: over the -big-records records; 58000 unless set)")
	flag.IntVar(&o.rounds, "rounds", 3, "-mode pocketbase and targets: rounds of the write loads; the table shows each load's median round")
	flag.IntVar(&o.bigRecords, "big-records", 100_000, "-mode targets: agents (records) created before the -updates, for the size after both")
	flag.StringVar(&o.databaseURL, "database-url", "", "also run every load on PostgreSQL: an EMPTY database at this URL (the harness takes the first start's owner token)")
	flag.BoolVar(&o.postgres, "postgres", false, "also run every load on PostgreSQL, in a throw-away cluster the harness starts (initdb in a temporary directory, fsync on)")
	flag.IntVar(&o.replicas, "replicas", 3, "with -database-url or -postgres: the replicas of the last deployment (the one before is a single replica)")
	flag.IntVar(&o.dbPoolSize, "db-pool-size", 0, "with -database-url or -postgres: each replica's --db-pool-size (0: its default)")
	flag.StringVar(&o.only, "only", "", "with -database-url or -postgres: run only the scenarios whose name contains this (or one of these, comma-separated)")
	flag.IntVar(&o.extras.members, "members", 0, "-mode seedbulk: developers added to the workspace, each limited to 3 agents")
	flag.IntVar(&o.extras.numbers, "numbers", 0, "-mode seedbulk: phone numbers (at least 1 with -campaigns)")
	flag.IntVar(&o.extras.campaigns, "campaigns", 0, "-mode seedbulk: campaigns, scheduled a year ahead")
	flag.IntVar(&o.extras.recipients, "recipients", 1000, "-mode seedbulk: recipients of each campaign")
	flag.IntVar(&o.extras.kbs, "kbs", 0, "-mode seedbulk: knowledge bases of 10 text sources each")
	flag.IntVar(&o.extras.updates, "updates-each", 0, "-mode seedbulk: each agent published, then updated this many times")
	flag.Parse()
	if o.mode == "targets" {
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		targetDefaults(&o, set)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func run(o options) error {
	if o.mode == "seed" || o.mode == "seedbulk" {
		return runSeed(o)
	}
	if err := checkWrk(); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "voiceapi-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if o.bin == "" {
		logf("building voiceapi")
		if o.bin, err = buildVoiceapi(work); err != nil {
			return err
		}
	}
	switch o.mode {
	case "pocketbase":
		return runPocketBase(o, work)
	case "targets":
		return runTargets(o, work)
	}
	extra, err := profileFlags(&o)
	if err != nil {
		return err
	}
	if o.databaseURL != "" || o.postgres {
		if o.mode != "table" || o.dataDir != "" {
			return errors.New("-database-url and -postgres run the table on fresh data: without -mode and -data")
		}
		return runBackends(o, work)
	}
	return runServed(o, work, extra)
}

// runSeed is -mode seed and seedbulk: -data seeded offline, once.
func runSeed(o options) error {
	if o.dataDir == "" {
		return errors.New("-mode seed needs -data DIR")
	}
	if _, err := os.Stat(filepath.Join(o.dataDir, stateFile)); err == nil {
		return fmt.Errorf("%s is already seeded", o.dataDir)
	}
	logf("seeding %s offline: %d agents, %d calls, %d writers", o.dataDir, o.agents, o.calls, o.seeders)
	start := time.Now()
	seed := func() (*state, error) { return seedOffline(o.dataDir, o.agents, o.calls, o.tools, o.seeders, logf) }
	if o.mode == "seedbulk" {
		seed = func() (*state, error) { return seedBulk(o.dataDir, o.databaseURL, o.agents, o.calls, o.extras, logf) }
	}
	if _, err := seed(); err != nil {
		return err
	}
	logf("seeded in %s", time.Since(start).Round(time.Second))
	return nil
}

// runServed is -mode table and groupcommit: voiceapi serves -data (or a fresh directory
// under work, seeded through the API first), with the server flags extra.
func runServed(o options, work string, extra []string) error {
	dir := o.dataDir
	if dir == "" {
		dir = filepath.Join(work, "data")
	}
	st, _ := loadState(dir) // nil for a fresh directory
	logPath := os.DevNull
	if o.keepLogs {
		logPath = filepath.Join(dir, "bench-server.log")
	}
	srv, err := startServer(o.bin, dir, logPath, extra...)
	if err != nil {
		return err
	}
	defer srv.stop()
	logf("voiceapi ready in %s on %s (pid %d)", srv.ready.Round(time.Millisecond), srv.addr, srv.cmd.Process.Pid)
	c := &client{base: srv.url(), http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.seeders}}}
	if st == nil {
		if st, err = seedServed(o, c, srv, dir); err != nil {
			return err
		}
	}
	c.token = st.Token
	switch o.mode {
	case "table":
		return runTable(o, c, srv, st, work)
	case "groupcommit":
		return runGroupCommit(o, srv, st, work)
	}
	return fmt.Errorf("unknown -mode %q", o.mode)
}

// seedServed seeds the fresh directory dir through the API of srv, as the owner its first
// start created, and saves the harness's state there.
func seedServed(o options, c *client, srv *serverProc, dir string) (*state, error) {
	if srv.token == "" {
		return nil, fmt.Errorf("%s is neither fresh nor seeded by this harness", dir)
	}
	st := &state{Email: srv.email, Password: srv.password, Token: srv.token}
	c.token = st.Token
	logf("seeding through the API: %d agents, %d calls", o.agents, o.calls)
	start := time.Now()
	if err := seedAPI(c, st, o.agents, o.calls, o.tools, o.seeders); err != nil {
		return nil, err
	}
	logf("seeded in %s", time.Since(start).Round(time.Millisecond))
	if err := st.save(dir); err != nil {
		return nil, err
	}
	return st, nil
}

// callsPage is the table's "list calls by agent (page of 100)": the first page of one
// agent's calls.
func callsPage(l load, agentID string) load {
	l.Name, l.Method, l.Path, l.IDs = "list calls by agent (page of 100)", "GET", "/api/v1/calls?per_page=100&agent_id={id}", []string{agentID}
	return l
}

// barePage is the ceiling pages are compared with: the bare server's page of 100 agents.
func barePage(l load) load {
	l.Name, l.Method, l.Path = "bare: page of 100 agents", "GET", "/api/v1/agents?per_page=100"
	return l
}

// row is one line of the table.
type row struct {
	name   string
	conc   int
	res    result
	mem    *mem    // voiceapi's memory after the run (nil for the bare baseline)
	vs     *result // the baseline it is compared with
	vsName string
}

func runTable(o options, c *client, srv *serverProc, st *state, work string) error {
	bare, err := baselineOf(c, st.Token, st.Agents[0])
	if err != nil {
		return err
	}
	defer bare.close()
	rows, err := runTableLoads(o, srv, bare, tableLoads(o, st), work)
	if err != nil {
		return err
	}
	m, err := memory(srv.cmd.Process.Pid)
	if err != nil {
		return err
	}
	printTable(o, srv, st, rows, m)
	for _, r := range rows {
		if r.res.Non2xx+r.res.Errors > 0 {
			return fmt.Errorf("%s: %d non-2xx responses and %d socket errors", r.name, r.res.Non2xx, r.res.Errors)
		}
	}
	return nil
}

// tableLoad is one scenario of the table and where it runs.
type tableLoad struct {
	l      load
	target string // "bare" (the ceiling) or "voiceapi"
	vs     string // the name of the load it is compared with
}

// tableLoads are the table's scenarios, in order: a baseline runs before the loads
// compared with it.
func tableLoads(o options, st *state) []tableLoad {
	agentID := st.Agents[0]
	base := load{Token: st.Token, Connections: o.connections, Threads: o.threads, Duration: o.duration, IDs: st.Agents}
	with := func(l load, f func(*load)) load { f(&l); return l }
	putBody := string(mustJSON(fakeagents.Body(nameMark, o.tools)))
	return []tableLoad{
		{with(base, func(l *load) { l.Name, l.Method, l.Path = "bare: GET agent", "GET", "/api/v1/agents/{id}" }), "bare", ""},
		{with(base, func(l *load) { l.Name, l.Method, l.Path = "GET agent", "GET", "/api/v1/agents/{id}" }), "voiceapi", "bare: GET agent"},
		{barePage(base), "bare", ""},
		{with(base, func(l *load) {
			l.Name, l.Method, l.Path = "list agents (page of 100)", "GET", "/api/v1/agents?per_page=100"
		}), "voiceapi", "bare: page of 100 agents"},
		{with(base, func(l *load) {
			l.Name, l.Method, l.Path, l.Body = "PUT agent (full body)", "PUT", "/api/v1/agents/{id}", putBody
		}), "voiceapi", "bare: GET agent"},
		{with(base, func(l *load) {
			l.Name, l.Method, l.Path, l.IDs, l.Body = "register call", "POST", "/api/v1/calls", []string{""}, string(mustJSON(callBody(agentID)))
		}), "voiceapi", "bare: GET agent"},
		// The agent the register-call run above gave thousands of calls: full pages.
		{callsPage(base, agentID), "voiceapi", "bare: page of 100 agents"},
		// Login is bcrypt at cost 12 by design: a few connections saturate the CPU.
		{with(base, func(l *load) {
			l.Name, l.Method, l.Path, l.IDs, l.Connections = "login", "POST", "/api/v1/auth/login", []string{""}, 4
			l.Body = string(mustJSON(map[string]string{"email": st.Email, "password": st.Password}))
		}), "voiceapi", "bare: GET agent"},
	}
}

// runTableLoads runs each load with wrk against its target, profiling voiceapi's runs
// when asked, and returns the table's rows, with voiceapi's memory after each of its runs.
func runTableLoads(o options, srv *serverProc, bare *baseline, loads []tableLoad, work string) ([]row, error) {
	results := map[string]*result{}
	var rows []row
	for _, x := range loads {
		url := srv.url()
		if x.target == "bare" {
			url = bare.url()
		}
		logf("wrk: %s (%d connections, %s)", x.l.Name, x.l.Connections, x.l.Duration)
		var saved <-chan error
		if x.target != "bare" {
			saved = profileDuring(o, x.l)
		}
		res, err := runWrk(url, x.l, work)
		if saved != nil {
			if perr := <-saved; perr != nil {
				logf("profile of %s: %v", x.l.Name, perr)
			}
		}
		if err != nil {
			return nil, err
		}
		results[x.l.Name] = &res
		r := row{name: x.l.Name, conc: x.l.Connections, res: res, vs: results[x.vs], vsName: x.vs}
		if x.target != "bare" {
			m, err := memory(srv.cmd.Process.Pid)
			if err != nil {
				return nil, err
			}
			r.mem = &m
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// printTable prints the table's heading, rows and voiceapi's start-up time and memory (m,
// after the runs).
func printTable(o options, srv *serverProc, st *state, rows []row, m mem) {
	fmt.Printf("\nvoiceapi load harness, %s, %s, load average %s\n", time.Now().UTC().Format(time.RFC3339), machine(), loadAverage())
	fmt.Printf("data: %d agents (%d tools each), %d calls seeded; wrk -t%d, %s a run; fsync on\n\n", len(st.Agents), o.tools, st.Calls, o.threads, o.duration)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tconns\treq/s\tp50\tp99\tnon-2xx\tratio\tto\tRSS after (anon+file) MiB\t")
	for _, r := range rows {
		ratio, to := "1.00", "(ceiling)"
		if r.vs != nil {
			ratio, to = fmt.Sprintf("%.2f", r.res.RPS/r.vs.RPS), r.vsName
		}
		rss := "-"
		if r.mem != nil {
			rss = fmt.Sprintf("%.0f (%.0f+%.0f)", r.mem.RSS, r.mem.Anon, r.mem.File)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%s\t%s\t%d\t%s\t%s\t%s\t\n", r.name, r.conc, r.res.RPS, fmtDur(r.res.P50), fmtDur(r.res.P99), r.res.Non2xx+r.res.Errors, ratio, to, rss)
	}
	tw.Flush()
	fmt.Printf("\nstart-up to ready: %s; RSS after the runs: %.0f MiB (peak %.0f MiB): %.0f MiB anonymous (heap, stacks), %.0f MiB mapped file pages (binary, database)\n",
		srv.ready.Round(time.Millisecond), m.RSS, m.HWM, m.Anon, m.File)
}

// runGroupCommit measures full-body PUT at 1 and at 32 connections: with fsync on, the
// ratio shows how many writers share a commit.
func runGroupCommit(o options, srv *serverProc, st *state, work string) error {
	putBody := string(mustJSON(fakeagents.Body(nameMark, o.tools)))
	var res [2]result
	for i, conns := range []int{1, 32} {
		l := load{Name: fmt.Sprintf("PUT agent x%d", conns), Method: "PUT", Path: "/api/v1/agents/{id}", IDs: st.Agents, Body: putBody,
			Token: st.Token, Connections: conns, Threads: o.threads, Duration: o.duration}
		logf("wrk: %s", l.Name)
		saved := profileDuring(o, l)
		r, err := runWrk(srv.url(), l, work)
		if err != nil {
			return err
		}
		if saved != nil {
			if err := <-saved; err != nil {
				logf("profile of %s: %v", l.Name, err)
			}
		}
		if r.Non2xx+r.Errors > 0 {
			return fmt.Errorf("%s: %d non-2xx responses and %d socket errors", l.Name, r.Non2xx, r.Errors)
		}
		res[i] = r
	}
	fmt.Printf("\nfull-body PUT agent, fsync on, %s, load average %s\n", time.Now().UTC().Format(time.RFC3339), loadAverage())
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "clients\treq/s\tp50\tp99\t")
	for i, conns := range []int{1, 32} {
		fmt.Fprintf(tw, "%d\t%.0f\t%s\t%s\t\n", conns, res[i].RPS, fmtDur(res[i].P50), fmtDur(res[i].P99))
	}
	tw.Flush()
	fmt.Printf("32 clients / 1 client: %.1fx (target 5x)\n", res[1].RPS/res[0].RPS)
	return nil
}

// profileFlags returns the serve flags that -profile needs (a --metrics-addr listener,
// which serves the CPU profiles) and notes the address in o for profileDuring.
func profileFlags(o *options) ([]string, error) {
	if o.profileDir == "" {
		return nil, nil
	}
	if err := os.MkdirAll(o.profileDir, 0o755); err != nil {
		return nil, err
	}
	metricsAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	o.profileDir += "|" + metricsAddr // read back by profileDuring
	return []string{"--metrics-addr", metricsAddr}, nil
}

// profileDuring fetches a CPU profile of voiceapi over most of l's run from the
// --metrics-addr listener and saves it as <scenario>.pprof; nil when -profile is off.
func profileDuring(o options, l load) <-chan error {
	dir, addr, ok := strings.Cut(o.profileDir, "|")
	if !ok {
		return nil
	}
	done := make(chan error, 1)
	go func() {
		secs := max(1, int(l.Duration.Seconds())-1)
		resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, secs))
		if err != nil {
			done <- err
			return
		}
		defer resp.Body.Close()
		f, err := os.Create(filepath.Join(dir, strings.NewReplacer(" ", "_", "(", "", ")", "", ":", "").Replace(l.Name)+".pprof"))
		if err != nil {
			done <- err
			return
		}
		_, err = io.Copy(f, resp.Body)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		done <- err
	}()
	return done
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
}

// machine names the platform and its CPUs, for the report's first line.
func machine() string {
	return fmt.Sprintf("%s/%s, %d CPUs", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
