package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// benchBody is a full agent body with 20 tools of every type.
func benchBody() map[string]any {
	tools := make([]any, 20)
	for i := range tools {
		switch i % 4 {
		case 0:
			tools[i] = map[string]any{"name": fmt.Sprint("end_", i), "type": "end_call", "description": "End the call."}
		case 1:
			tools[i] = map[string]any{"name": fmt.Sprint("transfer_", i), "type": "transfer_call", "custom_sip_headers": map[string]string{"X-Id": "1"},
				"phone_directory": []any{map[string]any{"name": "Billing", "phone_number": "+14155550100", "description": "Invoices", "transfer_type": "warm"}}}
		case 2:
			tools[i] = map[string]any{"name": fmt.Sprint("sms_", i), "type": "send_sms", "content_type": "static", "content": "Confirmed."}
		case 3:
			tools[i] = map[string]any{"name": fmt.Sprint("lookup_", i), "type": "custom_function", "http_method": "POST",
				"api_endpoint": "https://api.example.com/orders", "timeout": 5000, "custom_function_variables": []string{"order_id"},
				"custom_function_parameters": `{"type":"object"}`}
		}
	}
	return map[string]any{
		"name":                  "Bench",
		"call_config":           map[string]any{"max_call_duration_ms": 1800000, "ring_duration_ms": 20000},
		"knowledge_base_config": map[string]any{"chunks_to_retrieve": 5, "similarity_threshold": 0.5},
		"llm_config":            map[string]any{"provider": "groq", "model": "llama-3.3-70b-versatile", "temperature": 0.3, "api_key": "gsk_bench_secret_0123456789", "tools": tools},
		"prompt_config":         map[string]any{"prompt": "You are support.", "first_speaker": "ai", "welcome_message_type": "static", "welcome_message": "Hi."},
		"stt_config":            map[string]any{"provider": "deepgram", "model": "nova-3"},
		"tts_config":            map[string]any{"provider": "cartesia", "model": "sonic-3", "voice_id": "a0e99841-438c-4a64-b679-ae501e7d6091", "speed": "normal"},
	}
}

// benchRequest sends one request through a fresh keep-alive client and checks its status.
func benchRequest(b *testing.B, c *http.Client, method, url, token string, body []byte, status int) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != status {
		b.Fatalf("%s %s: %d", method, url, resp.StatusCode)
	}
}

// BenchmarkAgentShow is GET /api/v1/agents/{agent_id} through the whole HTTP stack with auth.
func BenchmarkAgentShow(b *testing.B) {
	e := newEnv(b)
	id := e.createAgent(e.Owner.Token, benchBody())["id"].(string)
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	url := e.URL + "/api/v1/agents/" + id
	b.ReportAllocs()
	for b.Loop() {
		benchRequest(b, c, "GET", url, e.Owner.Token, nil, 200)
	}
}

// BenchmarkAgentUpdateFull is a full-body PUT /api/v1/agents/{agent_id} (every group, 20 tools)
// through the whole HTTP stack with auth; two bodies alternate so each request writes.
func BenchmarkAgentUpdateFull(b *testing.B) {
	e := newEnv(b)
	id := e.createAgent(e.Owner.Token, map[string]any{"name": "Bench"})["id"].(string)
	var bodies [2][]byte
	for i := range bodies {
		body := benchBody()
		body["name"] = fmt.Sprint("Bench ", i)
		bodies[i], _ = json.Marshal(body)
	}
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	url := e.URL + "/api/v1/agents/" + id
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		benchRequest(b, c, "PUT", url, e.Owner.Token, bodies[i%2], 200)
		i++
	}
}
