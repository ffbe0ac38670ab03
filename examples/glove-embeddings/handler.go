package main

import (
	"encoding/json"
	"net/http"
)

// maxRequest bounds a request body: a batch of texts, not a corpus.
const maxRequest = 16 << 20

// Handler answers POST /v1/embeddings as OpenAI's API documents it: "input" a string or
// an array of strings, "model" the one this server serves; the answer a list of
// {"object": "embedding", "index", "embedding"} with usage counted in words. Errors come
// in OpenAI's shape, {"error": {"message", "type", "code"}}.
func Handler(t *Table, model string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/embeddings", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			fail(w, http.StatusMethodNotAllowed, "invalid_request_error", "", "Only POST is served here.")
			return
		}
		var req struct {
			Model string          `json:"model"`
			Input json.RawMessage `json:"input"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequest)).Decode(&req); err != nil {
			fail(w, http.StatusBadRequest, "invalid_request_error", "", "The body is not a JSON object: "+err.Error())
			return
		}
		if req.Model != model {
			fail(w, http.StatusNotFound, "invalid_request_error", "model_not_found", "The model `"+req.Model+"` does not exist; this server serves `"+model+"`.")
			return
		}
		texts, ok := inputs(req.Input)
		if !ok {
			fail(w, http.StatusBadRequest, "invalid_request_error", "", "'input' must be a string or a non-empty array of strings.")
			return
		}
		answer(w, t, model, texts)
	})
	return mux
}

func inputs(raw json.RawMessage) ([]string, bool) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, true
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil && len(many) > 0 {
		return many, true
	}
	return nil, false
}

func answer(w http.ResponseWriter, t *Table, model string, texts []string) {
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	type usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	}
	out := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
		Usage  usage  `json:"usage"`
	}{Object: "list", Model: model, Data: make([]item, len(texts))}
	for i, text := range texts {
		out.Data[i] = item{Object: "embedding", Index: i, Embedding: t.Embed(text)}
		out.Usage.PromptTokens += len(Tokens(text))
	}
	out.Usage.TotalTokens = out.Usage.PromptTokens
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

func fail(w http.ResponseWriter, status int, typ, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	var c any
	if code != "" {
		c = code
	}
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": message, "type": typ, "code": c}})
}
