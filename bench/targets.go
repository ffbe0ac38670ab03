package main

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// -mode targets: issue 17's six figures in one run, by the other modes' code paths
// (-mode pocketbase's sizes and rounds, -mode seed's seeder, the table's calls page),
// beside the bare ceiling, then one summary table (targets_summary.go).

// Issue 17's sizes, the defaults of -mode targets.
const (
	targetUpdates = 58_000
	targetCalls   = 1_000_000
)

// targetDefaults gives -mode targets the sizes where the flags shared with other
// modes (whose defaults are small) were not set on the command line.
func targetDefaults(o *options, set map[string]bool) {
	if !set["updates"] {
		o.updates = targetUpdates
	}
	if !set["calls"] {
		o.calls = targetCalls
	}
}

func runTargets(o options, work string) error {
	if o.rounds < 1 {
		return errors.New("-mode targets needs -rounds 1 or more")
	}
	began, loadBefore := time.Now(), loadAverage()
	r := &targetsRun{o: o, work: work, m: measurements{why: map[int]string{}, records: o.records, bigRecords: o.bigRecords, updates: o.updates, calls: o.calls}}
	if o.pocketbase == "" {
		r.m.why[1], r.m.why[2], r.m.why[4] = "no -pocketbase", "no -pocketbase", "no -pocketbase"
	}
	r.measureWrites()
	r.measureBigFile()
	seeding := r.measureCalls()

	for _, d := range r.details {
		d()
	}
	fmt.Printf("\nvoiceapi targets (issue 17), %s, %s, load average %s at the start, %s at the end; %s in all\n",
		time.Now().UTC().Format(time.RFC3339), machine(), loadBefore, loadAverage(), time.Since(began).Round(time.Second))
	fmt.Printf("wrk -t%d -c%d, %s a run", o.threads, o.connections, o.duration)
	if o.pocketbase != "" {
		fmt.Printf("; PUT and create: median of %d rounds, systems interleaved; PocketBase %s", o.rounds, pocketBaseVersion(o.pocketbase))
	}
	fmt.Printf("\ncalls directory: %s\n\n", seeding)
	figs := summary(r.m)
	if err := renderSummary(os.Stdout, figs); err != nil {
		return err
	}
	for _, f := range figs {
		if f.verdict == invalid {
			r.errs = append(r.errs, fmt.Errorf("%s: %s", f.name, f.why))
		}
	}
	if r.failedWrites != nil {
		r.errs = append(r.errs, r.failedWrites)
	}
	return errors.Join(r.errs...)
}

// targetsRun is one -mode targets run as its steps fill it: the figures, the errors of the
// steps that failed, and the details printed before the summary.
type targetsRun struct {
	o    options
	work string
	m    measurements
	// A failed step costs its figures, not the run's others (a full run takes most of an
	// hour): its error is printed after the summary and fails the run.
	errs []error
	// failedWrites names the write rounds that had failed requests.
	failedWrites error
	details      []func()
}

// fail records a step's error and marks the figures it cost.
func (r *targetsRun) fail(err error, figs ...int) {
	logf("%v", err)
	r.errs = append(r.errs, err)
	for _, f := range figs {
		if r.m.why[f] == "" {
			r.m.why[f] = "failed: see below"
		}
	}
}

// measureWrites is figure 3, then, with -pocketbase, figures 1 and 2 in the directories
// figure 3 wrote.
func (r *targetsRun) measureWrites() {
	o := r.o
	fresh, err := freshSizes(o, filepath.Join(r.work, "fresh"))
	if err != nil {
		r.fail(err, 1, 2, 3)
		return
	}
	r.m.agentGrowth = fresh.vFull.FileSize - fresh.vEmpty.FileSize
	if o.pocketbase == "" {
		r.details = append(r.details, func() { fmt.Printf("\nvoiceapi stats after %d creates:\n%s", fresh.records, fresh.vTable) })
		return
	}
	r.m.pbGrowth = fresh.pbFull - fresh.pbEmpty
	r.details = append(r.details, func() { printSizes(fresh) })
	names, runs, err := writeRounds(o, fresh, r.work)
	if err != nil {
		r.fail(err, 1, 2)
		return
	}
	r.m.writes, r.m.failed = medians(runs)
	r.failedWrites = failedRounds(names, runs)
	r.details = append([]func(){func() { printThroughput(o, names, runs) }}, r.details...)
}

// measureBigFile is figure 4, with -pocketbase.
func (r *targetsRun) measureBigFile() {
	if r.o.pocketbase == "" {
		return
	}
	big := r.o
	big.records = r.o.bigRecords
	s, err := measureSizes(big, filepath.Join(r.work, "big"))
	if err != nil {
		r.fail(err, 4)
		return
	}
	r.m.bigFile, r.m.pbBigFile = s.vFull.FileSize, s.pbFull
	if s.vUpdated != nil {
		r.m.bigFile, r.m.pbBigFile = s.vUpdated.FileSize, s.pbUpdated
	}
	r.details = append(r.details, func() { printSizes(s) })
}

// measureCalls is figures 5 and 6, on the seeded calls directory; it returns how that
// directory came to be, for the report.
func (r *targetsRun) measureCalls() string {
	o := r.o
	dir, st, seeding, err := seededCalls(o, r.work)
	if err != nil {
		r.fail(err, 5, 6)
		return "none (failed: see below)"
	}
	if err := r.m.callsSize(o.bin, dir, st); err != nil {
		r.fail(err, 5)
	}
	if table, err := exec.Command(o.bin, "stats", "--data", dir).Output(); err == nil {
		r.details = append(r.details, func() { fmt.Printf("\nvoiceapi stats of the calls directory:\n%s", table) })
	}
	page, bare, err := callsPageRun(o, dir, st, r.work)
	if err != nil {
		r.fail(err, 6)
		return seeding
	}
	r.m.page, r.m.barePage = &page, &bare
	n := len(st.Agents)
	r.m.pageCalls = min(100, (st.Calls+n-1)/n) // the seeders give agent i%n call i
	return seeding
}

// freshSizes is figure 3: o.records creates in fresh directories under dir, voiceapi's
// and, with -pocketbase, PocketBase's; no updates.
func freshSizes(o options, dir string) (*sizes, error) {
	s, err := measureVoiceapiCreates(o, dir)
	if err != nil || o.pocketbase == "" {
		return s, err
	}
	return s, s.measurePocketBaseCreates(o, dir)
}

// medians are each load's median round and its failed requests over all its rounds.
func medians(runs [][]result) ([]result, []int) {
	med, failed := make([]result, len(runs)), make([]int, len(runs))
	for i, rs := range runs {
		med[i] = median(rs)
		for _, r := range rs {
			failed[i] += r.Non2xx + r.Errors
		}
	}
	return med, failed
}

// seededCalls is the directory of figures 5 and 6: -data when the harness already seeded
// it with -calls calls (then reused as it is), else one seeded now by -mode seed's path
// (in -data, or under work when it is empty). seeding says which, for the report.
func seededCalls(o options, work string) (dir string, st *state, seeding string, err error) {
	dir = o.dataDir
	if dir == "" {
		dir = filepath.Join(work, "calls")
	}
	if st, err := loadState(dir); err == nil {
		if st.Calls != o.calls {
			return "", nil, "", fmt.Errorf("%s holds %d calls the harness seeded, not -calls %d: give -calls %d or another -data", dir, st.Calls, o.calls, st.Calls)
		}
		logf("%s holds %d calls: seeding skipped", dir, st.Calls)
		return dir, st, fmt.Sprintf("%s, reused: it held %d calls and %d agents (seeding skipped)", dir, st.Calls, len(st.Agents)), nil
	}
	if _, err := os.Stat(filepath.Join(dir, "voiceapi.db")); err == nil {
		return "", nil, "", fmt.Errorf("%s holds a database the harness did not seed (no %s)", dir, stateFile)
	}
	logf("seeding %s offline: %d agents, %d calls, %d writers", dir, o.agents, o.calls, o.seeders)
	began := time.Now()
	if st, err = seedOffline(dir, o.agents, o.calls, o.tools, o.seeders, logf); err != nil {
		return "", nil, "", err
	}
	took := time.Since(began).Round(time.Second)
	logf("seeded in %s", took)
	seeding = fmt.Sprintf("%s, seeded by this run: %d agents, %d calls, %d writers, in %s", dir, o.agents, o.calls, o.seeders, took)
	if o.dataDir == "" {
		seeding += " (removed at the end: -data DIR keeps it for the next run)"
	}
	return dir, st, seeding, nil
}

// callsSize is figure 5: the file as `voiceapi stats --json` reads it, with no process
// holding it. The calls bucket must hold the calls the state names: a table run on the
// directory (its register-call load) would add calls the figure does not count.
func (m *measurements) callsSize(bin, dir string, st *state) error {
	stats, err := voiceapiStats(bin, dir)
	if err != nil {
		return err
	}
	for _, b := range stats.Buckets {
		if b.Name == "calls" && b.Keys != st.Calls {
			return fmt.Errorf("%s: the calls bucket holds %d calls, %s says %d (another load added some): seed another directory", dir, b.Keys, stateFile, st.Calls)
		}
	}
	m.calls, m.callsFile = st.Calls, stats.FileSize
	return nil
}

// callsPageRun is figure 6: voiceapi serves dir, the bare server the same run's page of
// 100 agents (the ceiling of a page), then the table's calls page of the first agent.
func callsPageRun(o options, dir string, st *state, work string) (page, bare result, err error) {
	srv, err := startServer(o.bin, dir, o.logPath(dir, "targets"))
	if err != nil {
		return page, bare, err
	}
	defer srv.stop()
	b, err := baselineOf(&client{base: srv.url(), token: st.Token, http: &http.Client{}}, st.Token, st.Agents[0])
	if err != nil {
		return page, bare, err
	}
	defer b.close()
	base := load{Token: st.Token, IDs: st.Agents, Connections: o.connections, Threads: o.threads, Duration: o.duration}
	for _, x := range []struct {
		l   load
		url string
		res *result
	}{{barePage(base), b.url(), &bare}, {callsPage(base, st.Agents[0]), srv.url(), &page}} {
		logf("wrk: %s (%d connections, %s)", x.l.Name, x.l.Connections, x.l.Duration)
		if *x.res, err = runWrk(x.url, x.l, work); err != nil {
			return page, bare, err
		}
	}
	return page, bare, nil
}
