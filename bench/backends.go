package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/voiceapi/voiceapi/internal/fakeagents"
	"github.com/voiceapi/voiceapi/internal/pgtest"
)

// deployment is one way of running voiceapi that the same loads drive: one bbolt server,
// or N replicas on one PostgreSQL database.
type deployment struct {
	name  string
	procs []*serverProc
	st    *state
	// profiled: -profile saves CPU profiles of this deployment's first process.
	profiled bool
}

func (d *deployment) addrs() []string {
	out := make([]string, len(d.procs))
	for i, p := range d.procs {
		out[i] = p.addr
	}
	return out
}

// rss is the deployment's voiceapi processes' resident memory together, in MiB.
func (d *deployment) rss() (float64, error) {
	var sum float64
	for _, p := range d.procs {
		m, err := memory(p.cmd.Process.Pid)
		if err != nil {
			return 0, err
		}
		sum += m.RSS
	}
	return sum, nil
}

func (d *deployment) stop() {
	for _, p := range d.procs {
		p.stop()
	}
}

// runBackends is -database-url / -postgres: the same loads on bbolt, on one PostgreSQL
// replica and on -replicas replicas of that database, beside the bare ceiling, in one
// table. The loads interleave (each scenario runs on every deployment before the next),
// so that the machine's changing load weighs on all of them alike.
func runBackends(o options, work string) error {
	if o.replicas < 1 {
		return fmt.Errorf("-replicas must be at least 1")
	}
	extra := []string{}
	if o.dbPoolSize > 0 {
		extra = append(extra, "--db-pool-size", fmt.Sprint(o.dbPoolSize))
	}
	url := o.databaseURL
	var failures func() (int, error) // serialization failures so far; nil on -database-url
	if url == "" {
		// Every replica's pool (pgx's default is max(4, CPUs)), and room for the harness.
		perReplica := max(o.dbPoolSize, 4, runtime.NumCPU())
		cluster, err := pgtest.StartWith(pgtest.Options{Durable: true, MaxConnections: perReplica*o.replicas + 20})
		if err != nil {
			return err
		}
		defer cluster.Stop()
		failures = cluster.SerializationFailures
		if url, _, err = cluster.NewDatabase(context.Background()); err != nil {
			return err
		}
		logf("PostgreSQL started on %s (fsync on)", strings.TrimPrefix(url, "postgres://"))
	}

	bbolt, err := startDeployment(o, "bbolt", []string{filepath.Join(work, "data")}, nil)
	if err != nil {
		return err
	}
	defer bbolt.stop()
	// The replicas share --data, where the first creates the secret key file the others
	// read: every replica of one database must seal with the same key.
	keyDir := filepath.Join(work, "pg-key")
	if err := os.Mkdir(keyDir, 0o700); err != nil {
		return err
	}
	pgArgs := append([]string{"--database-url", url}, extra...)
	pg1, err := startDeployment(o, "postgres x1", []string{keyDir}, pgArgs)
	if err != nil {
		return err
	}
	defer pg1.stop()
	pg1.profiled = o.profileDir != ""
	pgN := &deployment{name: fmt.Sprintf("postgres x%d", o.replicas), procs: []*serverProc{pg1.procs[0]}, st: pg1.st}
	for i := 1; i < o.replicas; i++ {
		p, err := startServer(o.bin, keyDir, o.logPath(keyDir, fmt.Sprintf("replica-%d", i+1)), pgArgs...)
		if err != nil {
			return err
		}
		defer p.stop()
		logf("replica %d ready in %s on %s", i+1, p.ready.Round(time.Millisecond), p.addr)
		pgN.procs = append(pgN.procs, p)
	}
	deps := []*deployment{bbolt, pg1}
	if o.replicas > 1 {
		deps = append(deps, pgN)
	}
	return runBackendTable(o, deps, failures, work)
}

// logPath is where a server's request log goes: nowhere, unless -keep-logs.
func (o options) logPath(dir, name string) string {
	if !o.keepLogs {
		return os.DevNull
	}
	return filepath.Join(dir, "bench-"+strings.ReplaceAll(name, " ", "-")+".log")
}

// startDeployment starts one server on dir with args, seeds it through the API (agents,
// then calls) and returns it as a deployment.
func startDeployment(o options, name string, dirs []string, args []string) (*deployment, error) {
	var extra []string
	if o.profileDir != "" && name == "postgres x1" {
		_, addr, _ := strings.Cut(o.profileDir, "|")
		extra = append(extra, "--metrics-addr", addr)
	}
	srv, err := startServer(o.bin, dirs[0], o.logPath(dirs[0], name), append(args, extra...)...)
	if err != nil {
		return nil, err
	}
	d := &deployment{name: name, procs: []*serverProc{srv}}
	logf("%s: voiceapi ready in %s on %s (pid %d)", name, srv.ready.Round(time.Millisecond), srv.addr, srv.cmd.Process.Pid)
	if srv.token == "" {
		d.stop()
		return nil, fmt.Errorf("%s: the server printed no bootstrap token: the harness needs an empty database (or a fresh data directory)", name)
	}
	d.st = &state{Email: srv.email, Password: srv.password, Token: srv.token}
	c := &client{base: srv.url(), token: srv.token, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.seeders}}}
	logf("%s: seeding through the API: %d agents, %d calls", name, o.agents, o.calls)
	start := time.Now()
	if err := seedAPI(c, d.st, o.agents, o.calls, o.tools, o.seeders); err != nil {
		d.stop()
		return nil, err
	}
	logf("%s: seeded in %s", name, time.Since(start).Round(time.Millisecond))
	return d, nil
}

// backendRow is one line of the backends table.
type backendRow struct {
	scenario, deployment string
	res                  result
	conns, threads       int
	bare, bbolt          *result // what the ratios are to (nil: none)
	rss                  float64 // voiceapi's resident memory after the run (0: bare)
	// serialization is the serialization failures PostgreSQL logged during the run (-1:
	// not counted: bbolt, or a database the harness did not start).
	serialization int
}

// backendScenarios are the loads of the backends table; bare names the ceiling each
// compares with ("" for none).
func backendScenarios(o options, agentID string) []struct {
	l    load
	bare string
} {
	putBody := string(mustJSON(fakeagents.Body(nameMark, o.tools)))
	base := load{Threads: o.threads, Connections: o.connections, Duration: o.duration}
	mk := func(name, method, path, body string, ids []string) load {
		l := base
		l.Name, l.Method, l.Path, l.Body, l.IDs = name, method, path, body, ids
		return l
	}
	return []struct {
		l    load
		bare string
	}{
		{mk("GET agent", "GET", "/api/v1/agents/{id}", "", nil), "GET agent"},
		{mk("list agents (page of 100)", "GET", "/api/v1/agents?per_page=100", "", nil), "page of 100 agents"},
		{mk("create agent", "POST", "/api/v1/agents", putBody, []string{""}), "GET agent"},
		{mk("PUT agent (full body)", "PUT", "/api/v1/agents/{id}", putBody, nil), "GET agent"},
		{mk("register call", "POST", "/api/v1/calls", string(mustJSON(callBody(agentID))), []string{""}), "GET agent"},
		{callsPage(base, agentID), "page of 100 agents"},
	}
}

// runBackendTable runs the bare ceilings, then each scenario -only picks on each
// deployment in turn, prints the table, and fails if any run had errors.
func runBackendTable(o options, deps []*deployment, failures func() (int, error), work string) error {
	ownCluster := failures != nil
	ref := deps[0] // bbolt: the bare baseline serves its bytes
	c := &client{base: ref.procs[0].url(), token: ref.st.Token, http: http.DefaultClient}
	bare, err := baselineOf(c, ref.st.Token, ref.st.Agents[0])
	if err != nil {
		return err
	}
	defer bare.close()

	bares, rows, err := runBareLoads(o, ref, bare, work)
	if err != nil {
		return err
	}
	for i, sc := range backendScenarios(o, "") {
		if !slices.ContainsFunc(strings.Split(o.only, ","), func(part string) bool { return strings.Contains(sc.l.Name, part) }) {
			continue
		}
		var boltRes *result
		for _, d := range deps {
			// Each deployment's own first agent: its register-call run gives it calls,
			// so that its calls page is full.
			l := backendScenarios(o, d.st.Agents[0])[i].l
			l.Token = d.st.Token
			if l.IDs == nil {
				l.IDs = d.st.Agents
			}
			l = l.spread(d.addrs())
			logf("wrk: %s on %s (%d threads, %d connections, %s)", l.Name, d.name, l.Threads, l.Connections, l.Duration)
			counted := failures
			if d == deps[0] {
				counted = nil // bbolt: no PostgreSQL to count on
			}
			res, serialization, err := runBackendLoad(o, d, l, counted, work)
			if err != nil {
				return err
			}
			rss, err := d.rss()
			if err != nil {
				return err
			}
			r := backendRow{scenario: l.Name, deployment: d.name, res: res, conns: l.Connections, threads: l.Threads, bare: bares[sc.bare], rss: rss, serialization: serialization}
			if boltRes == nil {
				boltRes = &res
			} else {
				r.bbolt = boltRes
			}
			rows = append(rows, r)
		}
	}
	printBackendTable(o, deps, rows, ownCluster)
	for _, r := range rows {
		if r.res.Non2xx+r.res.Errors > 0 {
			return fmt.Errorf("%s on %s: %d non-2xx responses and %d socket errors", r.scenario, r.deployment, r.res.Non2xx, r.res.Errors)
		}
	}
	return nil
}

// runBareLoads runs the reads the bare baseline serves, ref's bytes without the
// server's work: the ceiling of each read scenario, by name, and the table's first rows.
func runBareLoads(o options, ref *deployment, bare *baseline, work string) (map[string]*result, []backendRow, error) {
	bares := map[string]*result{}
	var rows []backendRow
	for _, bl := range []load{
		{Name: "GET agent", Method: "GET", Path: "/api/v1/agents/{id}"},
		{Name: "page of 100 agents", Method: "GET", Path: "/api/v1/agents?per_page=100"},
	} {
		bl.Token, bl.IDs, bl.Connections, bl.Threads, bl.Duration = ref.st.Token, ref.st.Agents, o.connections, o.threads, o.duration
		logf("wrk: bare: %s", bl.Name)
		res, err := runWrk(bare.url(), bl, work)
		if err != nil {
			return nil, nil, err
		}
		bares[bl.Name] = &res
		rows = append(rows, backendRow{scenario: "bare: " + bl.Name, deployment: "(ceiling)", res: res, conns: bl.Connections, threads: bl.Threads, serialization: -1})
	}
	return bares, rows, nil
}

// runBackendLoad runs l on d with wrk, profiled when d is, and counts the serialization
// failures during the run when failures is given (-1 when not).
func runBackendLoad(o options, d *deployment, l load, failures func() (int, error), work string) (result, int, error) {
	var saved <-chan error
	if d.profiled {
		pl := l
		pl.Name = l.Name + " " + d.name
		saved = profileDuring(o, pl)
	}
	before := -1
	if failures != nil {
		var err error
		if before, err = failures(); err != nil {
			return result{}, 0, err
		}
	}
	res, err := runWrk(d.procs[0].url(), l, work)
	serialization := -1
	if before >= 0 {
		after, ferr := failures()
		if ferr != nil {
			return result{}, 0, ferr
		}
		serialization = after - before
	}
	if saved != nil {
		if perr := <-saved; perr != nil {
			logf("profile of %s: %v", l.Name, perr)
		}
	}
	return res, serialization, err
}

func printBackendTable(o options, deps []*deployment, rows []backendRow, ownCluster bool) {
	fmt.Printf("\nvoiceapi load harness, bbolt and PostgreSQL, %s, %s, load average %s\n", time.Now().UTC().Format(time.RFC3339), machine(), loadAverage())
	where := "-database-url"
	if ownCluster {
		where = "a cluster the harness started (fsync on, PostgreSQL's defaults)"
	}
	pool := "pgx's default"
	if o.dbPoolSize > 0 {
		pool = fmt.Sprint(o.dbPoolSize)
	}
	fmt.Printf("data: %d agents (%d tools each), %d calls seeded in each; %s a run; bbolt fsync on; PostgreSQL: %s, pool %s a replica\n", len(deps[0].st.Agents), o.tools, deps[0].st.Calls, o.duration, where, pool)
	fmt.Printf("replicas: wrk's threads take them in turn, one replica a thread (no proxy in between)\n\n")
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tdeployment\tthreads\tconns\treq/s\tp50\tp99\tnon-2xx\t40001 per 1k\tto bare\tto bbolt\tRSS MiB\t")
	for _, r := range rows {
		toBare, toBolt, rss, ser := "-", "-", "-", "-"
		if r.serialization >= 0 && r.res.Requests > 0 {
			ser = fmt.Sprintf("%.1f", float64(r.serialization)*1000/float64(r.res.Requests))
		}
		if r.bare != nil {
			toBare = fmt.Sprintf("%.2f", r.res.RPS/r.bare.RPS)
		}
		if r.bbolt != nil {
			toBolt = fmt.Sprintf("%.2f", r.res.RPS/r.bbolt.RPS)
		}
		if r.rss > 0 {
			rss = fmt.Sprintf("%.0f", r.rss)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.0f\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t\n", r.scenario, r.deployment, r.threads, r.conns, r.res.RPS, fmtDur(r.res.P50), fmtDur(r.res.P99), r.res.Non2xx+r.res.Errors, ser, toBare, toBolt, rss)
	}
	tw.Flush()
	fmt.Println("\nto bare: to the bare ceiling (single records to the bare GET, pages to the bare page of 100 agents); to bbolt: to the bbolt row of the same scenario; RSS: the deployment's voiceapi processes together; 40001 per 1k: serialization failures in PostgreSQL's log during the run per 1,000 requests (the dispatchers' and seeding's included; - when not counted)")
}
