package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/internal/fakeagents"
	"github.com/voiceapi/voiceapi/internal/fakecalls"
)

// stateFile, in a data directory the harness seeded, says how to use it again.
const stateFile = "bench-state.json"

// state is what the harness needs to drive a seeded server.
type state struct {
	Email    string   `json:"email"`
	Password string   `json:"password"`
	Token    string   `json:"token"`
	Agents   []string `json:"agents"`
	Calls    int      `json:"calls"`
	// DevToken is the API key of a developer limited to DevAgents (seedExtras).
	DevToken  string   `json:"dev_token,omitempty"`
	DevAgents []string `json:"dev_agents,omitempty"`
}

func loadState(dir string) (*state, error) {
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return nil, err
	}
	var st state
	return &st, json.Unmarshal(b, &st)
}

func (st *state) save(dir string) error {
	return os.WriteFile(filepath.Join(dir, stateFile), mustJSON(st), 0o600)
}

// seedOffline builds a data directory without a server, through the bolt package's
// exported API: the same validation, indexes, events and group commit (fsync on) that
// the API uses, without HTTP in the way. It is how the 1,000,000-call directory is made:
// through the API that takes far longer on this machine than the run it prepares.
func seedOffline(dir string, agents, calls, tools, workers int, logf func(string, ...any)) (*state, error) {
	db, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ctx := context.Background()
	svc := cli.NewServices(db)
	seed, err := seedAccount(ctx, svc, agents, tools)
	if err != nil {
		return nil, err
	}
	st, pctx, in := seed.st, seed.pctx, seed.call
	// The webhook dispatcher moves each event out of the outbox as a server does, so
	// the directory does not start its life with a million-event backlog.
	stopFan := make(chan struct{})
	fanned := make(chan error, 1)
	go func() {
		for {
			n, err := svc.Deliveries.FanOut(ctx, 256)
			if err != nil {
				fanned <- err
				return
			}
			if n == 0 {
				select {
				case <-stopFan:
					fanned <- nil
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		}
	}()
	var next, done atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(calls) {
					return
				}
				c := in
				c.AgentID = st.Agents[i%int64(len(st.Agents))]
				c.Transcript = fakecalls.Transcript(i) // word variety for the search index
				if _, err := svc.Calls.RegisterCall(pctx, c); err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				if n := done.Add(1); n%100_000 == 0 {
					logf("  %d calls (%.0f/s)", n, float64(n)/time.Since(start).Seconds())
				}
			}
		}()
	}
	wg.Wait()
	close(stopFan)
	if err := <-fanned; err != nil && firstErr == nil {
		firstErr = err
	}
	if firstErr != nil {
		return nil, firstErr
	}
	st.Calls = calls
	return st, st.save(dir)
}

// client sends the harness's own requests (seeding, fetching the baseline's bodies).
type client struct {
	base  string
	token string
	http  *http.Client
}

func (c *client) do(method, path string, body []byte, want int) ([]byte, error) {
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, out)
	}
	return out, nil
}

// seedAPI creates agents and calls through the running server, workers at a time.
func seedAPI(c *client, st *state, agents, calls, tools, workers int) error {
	ids := make([]string, agents)
	err := parallel(agents, workers, func(i int) error {
		out, err := c.do("POST", "/api/v1/agents", mustJSON(fakeagents.Body(fmt.Sprintf("Agent %d", i), tools)), http.StatusCreated)
		if err != nil {
			return err
		}
		var rec struct {
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(out, &rec); err != nil {
			return err
		}
		ids[i] = rec.Data.ID
		return nil
	})
	if err != nil {
		return err
	}
	st.Agents = append(st.Agents, ids...)
	err = parallel(calls, workers, func(i int) error {
		_, err := c.do("POST", "/api/v1/calls", mustJSON(callBody(st.Agents[i%len(st.Agents)])), http.StatusCreated)
		return err
	})
	st.Calls += calls
	return err
}

// parallel runs fn(0..n-1) on workers goroutines and returns the first error.
func parallel(n, workers int, fn func(i int) error) error {
	var next atomic.Int64
	errs := make(chan error, workers)
	for range workers {
		go func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					errs <- nil
					return
				}
				if err := fn(i); err != nil {
					next.Store(int64(n)) // stop the others
					errs <- err
					return
				}
			}
		}()
	}
	var first error
	for range workers {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}
