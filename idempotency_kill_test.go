package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// idemRequest is one create sent under an Idempotency-Key.
type idemRequest struct {
	path, name, key string
	acked           bool // answered 201 before the kill
}

// TestIdempotencyAcrossKills sends creates under Idempotency-Keys from several clients,
// SIGKILLs the server at a random moment, restarts it and retries every request whose
// answer was lost. Each key must have made exactly one record: a kill between a create's
// commit and the keeping of its response must not let the retry create it again
// (service/idempotency_claim.go). VOICEAPI_IDEM_KILL_ROUNDS sets the rounds (default 4).
func TestIdempotencyAcrossKills(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it repeatedly")
	}
	rounds := idemKillRounds(t)
	tmp := t.TempDir()
	bin := voiceapiBinary(t)
	dataDir := filepath.Join(tmp, "data")
	srv, stdout := startServer(t, bin, dataDir, "--rate-limit", "0")
	token := bootstrapToken(t, stdout)
	hc := &http.Client{Timeout: 5 * time.Second}
	var all []*idemRequest
	retried, lostAnswers := 0, 0
	for round := range rounds {
		all = createUntilKilled(t, hc, srv, token, round, all)
		srv, _ = startServer(t, bin, dataDir, "--rate-limit", "0")
		r, l := retryLostAnswers(t, hc, srv.url, token, all)
		retried, lostAnswers = retried+r, lostAnswers+l
	}
	checkEachMadeOnce(t, hc, srv.url, token, all)
	t.Logf("%d rounds, %d creates, %d answers lost at a kill and retried (%d answered 201)", rounds, len(all), lostAnswers, retried)
	srv.cmd.Process.Signal(syscall.SIGTERM)
}

// idemKillRounds reads VOICEAPI_IDEM_KILL_ROUNDS, 4 when unset.
func idemKillRounds(t *testing.T) int {
	t.Helper()
	rounds := 4
	if s := os.Getenv("VOICEAPI_IDEM_KILL_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			t.Fatalf("VOICEAPI_IDEM_KILL_ROUNDS=%q: want a count from 1 to 1000", s)
		}
		rounds = n
	}
	return rounds
}

// createUntilKilled runs four clients sending creates until srv is SIGKILLed at a random
// moment, and returns all with every request sent appended.
func createUntilKilled(t *testing.T, hc *http.Client, srv *proc, token string, round int, all []*idemRequest) []*idemRequest {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for c := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				path := []string{"/api/v1/workspaces", "/api/v1/agents"}[i%2]
				r := &idemRequest{path: path, name: fmt.Sprintf("r%d-c%d-%d", round, c, i), key: fmt.Sprintf("key-%d-%d-%d", round, c, i)}
				status, _, err := idemPost(hc, srv.url, token, r)
				r.acked = err == nil && status == 201
				mu.Lock()
				all = append(all, r)
				mu.Unlock()
				if err != nil {
					return // the server is gone
				}
				if status != 201 {
					t.Errorf("%s %s: %d", r.path, r.name, status)
					return
				}
			}
		}()
	}
	time.Sleep(time.Duration(100+rand.IntN(500)) * time.Millisecond)
	srv.cmd.Process.Signal(syscall.SIGKILL)
	srv.cmd.Wait()
	close(stop)
	wg.Wait()
	return all
}

// retryLostAnswers retries, on the restarted server at url, every request whose answer
// was lost; each must answer 201 or say it was carried out. It returns how many answered
// 201 and how many were retried.
func retryLostAnswers(t *testing.T, hc *http.Client, url, token string, all []*idemRequest) (retried, lostAnswers int) {
	t.Helper()
	for _, r := range all {
		if r.acked {
			continue
		}
		lostAnswers++
		status, body, err := idemPost(hc, url, token, r)
		if err != nil {
			t.Fatalf("retry of %s: %v", r.name, err)
		}
		switch {
		case status == 201:
			retried++
		case status == 409 && strings.Contains(string(body), "carried out"):
		default:
			t.Errorf("retry of %s %s after the kill: %d %s", r.path, r.name, status, body)
		}
		r.acked = true // now it has an answer: it must exist exactly once
	}
	return retried, lostAnswers
}

// checkEachMadeOnce checks every request sent made its record exactly once.
func checkEachMadeOnce(t *testing.T, hc *http.Client, url, token string, all []*idemRequest) {
	t.Helper()
	counts := map[string]int{}
	for _, path := range []string{"/api/v1/workspaces", "/api/v1/agents"} {
		for name, n := range countNames(t, hc, url+path, token) {
			counts[name] += n
		}
	}
	for _, r := range all {
		if n := counts[r.name]; n != 1 {
			t.Errorf("%s %s was made %d times, want once", r.path, r.name, n)
		}
	}
}

func idemPost(hc *http.Client, url, token string, r *idemRequest) (int, []byte, error) {
	req, _ := http.NewRequest("POST", url+r.path, strings.NewReader(`{"name":"`+r.name+`"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", r.key)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// countNames walks a list and counts its records by name.
func countNames(t *testing.T, hc *http.Client, url, token string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	cursor := ""
	for range 10000 {
		req, _ := http.NewRequest("GET", url+"?per_page=100&cursor="+cursor, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Data []struct{ Name string }
			Meta struct {
				NextCursor *string `json:"next_cursor"`
			}
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range page.Data {
			counts[d.Name]++
		}
		if page.Meta.NextCursor == nil {
			return counts
		}
		cursor = *page.Meta.NextCursor
	}
	t.Fatal("list walk did not end")
	return nil
}

// bootstrapToken is the API token a first start printed on stdout ("api token: …").
func bootstrapToken(t *testing.T, stdout string) string {
	t.Helper()
	for _, line := range strings.Split(stdout, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "api token:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no bootstrap token on stdout:\n%s", stdout)
	return ""
}
