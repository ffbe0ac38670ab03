package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// dialTask is what the test reads of a claimed task.
type dialTask struct {
	RecipientID string `json:"recipient_id"`
	Attempt     int    `json:"attempt"`
	ToNumber    string `json:"to_number"`
	Call        struct {
		ID string `json:"id"`
	} `json:"call"`
}

func claimTasks(t *testing.T, url, token string, max int) []dialTask {
	t.Helper()
	status, body := call(t, "POST", url+"/api/v1/dial-tasks/claim", token, fmt.Sprintf(`{"max":%d,"lease_seconds":10}`, max))
	if status != 200 {
		t.Fatalf("claim: %d %s", status, body)
	}
	var out struct {
		Data struct{ Tasks []dialTask } `json:"data"`
	}
	json.Unmarshal(body, &out)
	return out.Data.Tasks
}

func reportCall(t *testing.T, url, token, id, body string) {
	t.Helper()
	if status, b := call(t, "PUT", url+"/api/v1/calls/"+id, token, body); status != 204 && status != 200 {
		t.Fatalf("report %s: %d %s", id, status, b)
	}
}

// TestDialTasksSurviveKill: the server that leased 8 of 20 tasks is killed (SIGKILL).
// Its leases are in the database: the restarted server hands out the 12 others and none
// of the 8; the 3 calls reported started before the kill are recorded after it; the 5
// never reported are given back once their lease ends (their calls fail with
// dial_lease_expired) and dialed again as the same attempt; the campaign completes with
// every recipient answered once.
func TestDialTasksSurviveKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it")
	}
	if now := time.Now().UTC(); now.Hour() == 23 && now.Minute() >= 58 {
		time.Sleep(time.Until(now.Truncate(24 * time.Hour).Add(24 * time.Hour))) // the window below closes at 23:59 UTC
	}
	tmp := t.TempDir()
	bin := voiceapiBinary(t)
	dataDir := filepath.Join(tmp, "data")
	flags := []string{"--rate-limit", "0"}
	srv, stdout := startServer(t, bin, dataDir, flags...)
	token := bootstrapToken(t, stdout)
	campaign := createDialCampaign(t, srv.url, token)

	before := claimTasks(t, srv.url, token, 8)
	if len(before) != 8 {
		t.Fatalf("claimed %d before the kill, want 8", len(before))
	}
	for _, task := range before[:3] {
		reportCall(t, srv.url, token, task.Call.ID, `{"status":"ongoing"}`)
	}
	srv.cmd.Process.Signal(syscall.SIGKILL)
	srv.cmd.Wait()

	srv, _ = startServer(t, bin, dataDir, flags...)
	leased := claimTheOthers(t, srv.url, token, before)
	time.Sleep(11 * time.Second) // past the 10-second lease
	claimGivenBack(t, srv.url, token, campaign, before, leased)
	checkCampaignCompleted(t, srv.url, token, campaign, before)
	srv.cmd.Process.Signal(syscall.SIGTERM)
	srv.cmd.Wait()
}

// createDialCampaign creates a published agent, a number and a campaign of 20
// recipients dialable all day, 20 at once; it returns the campaign's id.
func createDialCampaign(t *testing.T, url, token string) string {
	t.Helper()
	id := func(status int, body []byte) string {
		t.Helper()
		var r struct{ Data struct{ ID string } }
		json.Unmarshal(body, &r)
		if status != 201 || r.Data.ID == "" {
			t.Fatalf("create: %d %s", status, body)
		}
		return r.Data.ID
	}
	agent := id(call(t, "POST", url+"/api/v1/agents", token, `{"name":"Dialer"}`))
	if status, body := call(t, "POST", url+"/api/v1/agents/"+agent+"/publish", token, ""); status != 204 {
		t.Fatalf("publish: %d %s", status, body)
	}
	number := id(call(t, "POST", url+"/api/v1/numbers", token, `{"phone_number":"+14155550123","provider":"sip"}`))
	recipients := ""
	for i := range 20 {
		if i > 0 {
			recipients += ","
		}
		recipients += fmt.Sprintf(`{"phone_number":"+1415555%04d"}`, 1000+i)
	}
	return id(call(t, "POST", url+"/api/v1/campaigns", token, `{"name":"Kill","agent_id":"`+agent+`","number_id":"`+number+
		`","window":{"days":["mon","tue","wed","thu","fri","sat","sun"],"start":"00:00","end":"23:59"},"max_concurrent":20,"recipients":[`+recipients+`]}`))
}

// claimTheOthers checks that the restarted server hands out the 12 tasks never leased
// and none of before, whose leases hold; it ends those 12 calls and the 3 of before
// reported started, and returns the recipients leased before the kill.
func claimTheOthers(t *testing.T, url, token string, before []dialTask) map[string]bool {
	t.Helper()
	leased := map[string]bool{}
	for _, task := range before {
		leased[task.RecipientID] = true
	}
	after := claimTasks(t, url, token, 100)
	if len(after) != 12 {
		t.Fatalf("claimed %d after the restart, want the 12 never leased", len(after))
	}
	for _, task := range after {
		if leased[task.RecipientID] {
			t.Fatalf("%s was handed out again while its lease held", task.ToNumber)
		}
		reportCall(t, url, token, task.Call.ID, `{"status":"ended","disconnection_reason":"user_hangup"}`)
	}
	for _, task := range before[:3] {
		reportCall(t, url, token, task.Call.ID, `{"status":"ended","disconnection_reason":"user_hangup"}`)
	}
	return leased
}

// claimGivenBack checks that, once the leases ended, the 5 tasks of before never
// started are handed out again as attempt 1, and none started before the kill; it ends
// their calls.
func claimGivenBack(t *testing.T, url, token, campaign string, before []dialTask, leased map[string]bool) {
	t.Helper()
	again := claimTasks(t, url, token, 100)
	if len(again) != 5 {
		_, rs := call(t, "GET", url+"/api/v1/campaigns/"+campaign+"/recipients?per_page=100", token, "")
		var dump struct{ Data []map[string]any }
		json.Unmarshal(rs, &dump)
		for _, r := range dump.Data {
			t.Logf("%v %v %v %v", r["phone_number"], r["state"], r["lease_until"], r["attempts"])
		}
		t.Fatalf("claimed %d once the leases ended, want the 5 never started", len(again))
	}
	for i, task := range again {
		if !leased[task.RecipientID] || task.Attempt != 1 {
			t.Fatalf("given back: %+v, want one of the 5 unstarted as attempt 1", task)
		}
		for _, b := range before[:3] {
			if b.RecipientID == task.RecipientID {
				t.Fatalf("%s was started before the kill and dialed again", task.ToNumber)
			}
		}
		reportCall(t, url, token, again[i].Call.ID, `{"status":"ended","disconnection_reason":"user_hangup"}`)
	}
}

// checkCampaignCompleted checks that the campaign completed with every recipient
// answered once, and that the calls of the tasks never started before the kill failed
// with dial_lease_expired.
func checkCampaignCompleted(t *testing.T, url, token, campaign string, before []dialTask) {
	t.Helper()
	status, body := call(t, "GET", url+"/api/v1/campaigns/"+campaign, token, "")
	var c struct {
		Data struct {
			Status string
			Counts struct {
				Completed map[string]int
			}
		}
	}
	json.Unmarshal(body, &c)
	if status != 200 || c.Data.Status != "completed" || c.Data.Counts.Completed["answered"] != 20 {
		t.Fatalf("campaign: %d %s", status, body)
	}
	for _, task := range before[3:] {
		status, body := call(t, "GET", url+"/api/v1/calls/"+task.Call.ID, token, "")
		if status != 200 {
			t.Fatalf("call %s: %d %s", task.Call.ID, status, body)
		}
		var full struct {
			Data map[string]any `json:"data"`
		}
		json.Unmarshal(body, &full)
		if full.Data["status"] != "failed" || full.Data["disconnection_reason"] != "dial_lease_expired" {
			t.Errorf("the unstarted call %s: %v %v, want failed dial_lease_expired", task.Call.ID, full.Data["status"], full.Data["disconnection_reason"])
		}
	}
}
