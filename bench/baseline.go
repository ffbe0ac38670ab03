package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// baseline is the ceiling of this HTTP stack: a bare net/http server that serves the
// same bytes voiceapi would, from memory, behind the same token check bolt.Authenticate
// makes (SHA-256 of the bearer secret compared in constant time with a stored hash), and
// nothing else: no router, no database, no log line, no metrics.
type baseline struct {
	keyID  int64
	hash   [32]byte
	agent  []byte // GET /api/v1/agents/{id}
	page   []byte // GET /api/v1/agents?per_page=100
	server *http.Server
	addr   string
}

// baselineOf starts the bare server on the bytes voiceapi serves (through c) for agent
// agentID and for the first page of 100 agents.
func baselineOf(c *client, token, agentID string) (*baseline, error) {
	agentJSON, err := c.do("GET", "/api/v1/agents/"+agentID, nil, http.StatusOK)
	if err != nil {
		return nil, err
	}
	pageJSON, err := c.do("GET", "/api/v1/agents?per_page=100", nil, http.StatusOK)
	if err != nil {
		return nil, err
	}
	var page struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(pageJSON, &page); err != nil {
		return nil, fmt.Errorf("the page of agents: %w", err)
	}
	return newBaseline(token, agentJSON, pageJSON)
}

func newBaseline(token string, agent, page []byte) (*baseline, error) {
	idPart, secret, _ := strings.Cut(token, "|")
	id, _ := strconv.ParseInt(idPart, 10, 64)
	b := &baseline{keyID: id, hash: sha256.Sum256([]byte(secret)), agent: agent, page: page}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/agents/{id}", func(w http.ResponseWriter, r *http.Request) { b.serve(w, r, b.agent) })
	mux.HandleFunc("GET /api/v1/agents", func(w http.ResponseWriter, r *http.Request) { b.serve(w, r, b.page) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b.addr = ln.Addr().String()
	b.server = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go b.server.Serve(ln)
	return b, nil
}

func (b *baseline) serve(w http.ResponseWriter, r *http.Request, body []byte) {
	if !b.authorized(r.Header.Get("Authorization")) {
		w.Header().Set("WWW-Authenticate", "Bearer")
		http.Error(w, `{"message":"Unauthenticated.","code":"unauthenticated"}`, http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

func (b *baseline) authorized(header string) bool {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	idPart, secret, ok := strings.Cut(strings.TrimSpace(token), "|")
	if !ok {
		return false
	}
	id, err := strconv.ParseInt(idPart, 10, 64)
	if err != nil || id != b.keyID {
		return false
	}
	sum := sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(sum[:], b.hash[:]) == 1
}

func (b *baseline) url() string { return "http://" + b.addr }

func (b *baseline) close() { b.server.Close() }
