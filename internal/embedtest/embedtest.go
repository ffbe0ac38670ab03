// Package embedtest is a local stand-in for an OpenAI-compatible embeddings endpoint
// (POST /v1/embeddings), for tests and evaluations that must not reach a network. Its
// vectors are deterministic: the same text always gives the same vector, and texts sharing
// words or word fragments point the same way. It is no language model: it knows nothing of
// synonyms, so figures measured with it show that the vector path works, not what a real
// model would add.
package embedtest

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
)

// DefaultDim is the dimension of the stand-in's vectors.
const DefaultDim = 256

// Server is a running stand-in. Its faults can be switched while it runs, to show how the
// caller behaves when a provider goes down, answers the wrong dimension or hangs.
type Server struct {
	*httptest.Server
	// Model is the only model name it accepts; any model when empty.
	Model string
	// Key, when set, is the bearer token it requires.
	Key string

	dim      atomic.Int64
	down     atomic.Bool
	delay    atomic.Int64 // nanoseconds before answering
	requests atomic.Int64
	inputs   atomic.Int64

	mu     sync.Mutex
	models []string
}

// Start runs a stand-in on loopback; Close stops it.
func Start() *Server {
	s := &Server{}
	s.dim.Store(DefaultDim)
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the API root to configure ("…/v1"), to which clients append "/embeddings".
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// SetDown makes every request fail with 503 (true) or succeed again (false).
func (s *Server) SetDown(down bool) { s.down.Store(down) }

// SetDim changes the dimension of the vectors it answers, as a provider whose model was
// swapped would.
func (s *Server) SetDim(dim int) { s.dim.Store(int64(dim)) }

// SetDelay makes it wait d before answering (a request whose context ends first gets
// nothing).
func (s *Server) SetDelay(d time.Duration) { s.delay.Store(int64(d)) }

// Requests is the number of embedding requests answered or refused so far.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Inputs is the number of texts embedded so far.
func (s *Server) Inputs() int64 { return s.inputs.Load() }

// Models lists the model named by each request, in order.
func (s *Server) Models() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.models...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	if d := time.Duration(s.delay.Load()); d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
	}
	if s.down.Load() {
		http.Error(w, `{"error":{"message":"the model is loading"}}`, http.StatusServiceUnavailable)
		return
	}
	if s.Key != "" && r.Header.Get("Authorization") != "Bearer "+s.Key {
		http.Error(w, `{"error":{"message":"invalid api key"}}`, http.StatusUnauthorized)
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Input) == 0 || (s.Model != "" && req.Model != s.Model) {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.models = append(s.models, req.Model)
	s.mu.Unlock()
	s.inputs.Add(int64(len(req.Input)))
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	out := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
	}{Object: "list", Model: req.Model}
	dim := int(s.dim.Load())
	for i, text := range req.Input {
		out.Data = append(out.Data, item{Object: "embedding", Index: i, Embedding: Vector(text, dim)})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// Vector is the stand-in's embedding of text: each lowercased word and each of its
// character trigrams adds a signed weight to a bucket picked by its hash (the "hashing
// trick"), and the sum is scaled to unit length. A text with no letters or digits gets a
// fixed unit vector.
func Vector(text string, dim int) []float32 {
	v := make([]float64, dim)
	add := func(feature string, weight float64) {
		h := fnv.New64a()
		h.Write([]byte(feature))
		x := h.Sum64()
		sign := 1.0
		if x>>63 == 1 {
			sign = -1
		}
		v[int(x%uint64(dim))] += sign * weight
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		add("w:"+w, 1)
		padded := []rune(" " + w + " ")
		for i := 0; i+3 <= len(padded); i++ {
			add("t:"+string(padded[i:i+3]), 0.4)
		}
	}
	var sum float64
	for _, x := range v {
		sum += x * x
	}
	out := make([]float32, dim)
	if sum == 0 {
		out[0] = 1
		return out
	}
	n := math.Sqrt(sum)
	for i, x := range v {
		out[i] = float32(x / n)
	}
	return out
}
