package main

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/knowledge"
)

// smallGloVe is a vocabulary in GloVe's text format, most frequent word first.
const smallGloVe = "the 1 0 0\ncat 0 1 0\ndog 0 0.8 0.6\ncar 0 0 1\n"

func loadSmall(t *testing.T) *Table {
	t.Helper()
	tab, err := LoadText(strings.NewReader(smallGloVe), 0, DefaultSIFA)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func near(a []float32, b []float64) bool {
	for i := range b {
		if math.Abs(float64(a[i])-b[i]) > 1e-6 {
			return false
		}
	}
	return len(a) == len(b)
}

// TestEmbedWeighsRareWordsMore: a text's vector is the SIF-weighted mean of its words'
// vectors at unit length, "the" (rank 1) weighing less than "cat" (rank 2), unknown words
// and punctuation ignored.
func TestEmbedWeighsRareWordsMore(t *testing.T) {
	tab := loadSmall(t)
	h := math.Log(4) + 0.5772156649
	weight := func(rank int) float64 { p := 1 / (float64(rank) * h); return DefaultSIFA / (DefaultSIFA + p) }
	wThe, wCat := weight(1), weight(2)
	n := math.Hypot(wThe, wCat)
	got := tab.Embed("The CAT, purring!")
	if !near(got, []float64{wThe / n, wCat / n, 0}) {
		t.Errorf("Embed = %v, want (%.6f, %.6f, 0)", got, wThe/n, wCat/n)
	}
	if got[0] >= got[1] {
		t.Errorf("the frequent word weighs %v, the rarer %v", got[0], got[1])
	}
	if v := tab.Embed("zebra ?"); !near(v, []float64{0, 0, 0}) {
		t.Errorf("a text of unknown words = %v, want the zero vector", v)
	}
}

func TestLoadText(t *testing.T) {
	tab, err := LoadText(strings.NewReader(smallGloVe), 2, DefaultSIFA)
	if err != nil || tab.Words() != 2 || tab.Dim != 3 {
		t.Fatalf("limit 2: %v words of %v dimensions, %v", tab.Words(), tab.Dim, err)
	}
	if v := tab.Embed("dog"); !near(v, []float64{0, 0, 0}) {
		t.Errorf("a word past the limit was kept: %v", v)
	}
	for _, bad := range []string{"", "the\n", "the 1 x 0\n", "the 1 0 0\ncat 1 0\n"} {
		if _, err := LoadText(strings.NewReader(bad), 0, DefaultSIFA); err == nil {
			t.Errorf("%q was loaded", bad)
		}
	}
}

// TestLoadWink: the npm package's JSON (each vector followed by its norm and index) gives
// the same table as the text format, and is refused when out of order.
func TestLoadWink(t *testing.T) {
	doc := `{"precision":8,"dimensions":3,"words":["the","cat","dog","car"],"vectors":{` +
		`"car":[0,0,1,1,3],"the":[1,0,0,1,0],"cat":[0,1,0,1,1],"dog":[0,0.8,0.6,1,2]},"unkVector":[0,0,0]}`
	wink, err := LoadWink(strings.NewReader(doc), 0, DefaultSIFA)
	if err != nil {
		t.Fatal(err)
	}
	text := loadSmall(t)
	for _, s := range []string{"the cat", "dog car", "the dog"} {
		if a, b := wink.Embed(s), text.Embed(s); !near(a, []float64{float64(b[0]), float64(b[1]), float64(b[2])}) {
			t.Errorf("%q: %v from the JSON, %v from the text", s, a, b)
		}
	}
	if lim, err := LoadWink(strings.NewReader(doc), 3, DefaultSIFA); err != nil || lim.Words() != 3 {
		t.Errorf("limit 3: %d words, %v", lim.Words(), err)
	}
	for _, bad := range []string{
		`[]`,
		`{"vectors":{"the":[1,0,0]},"dimensions":3,"words":["the"]}`,
		`{"dimensions":3,"words":["the"],"vectors":{"the":[1,0]}}`,
		`{"words":["the"],"dimensions":0,"vectors":{}}`,
	} {
		if _, err := LoadWink(strings.NewReader(bad), 0, DefaultSIFA); err == nil {
			t.Errorf("%s was loaded", bad)
		}
	}
}

// TestHandlerSpeaksTheProtocol: voiceapi's own embeddings client gets each text's vector;
// a single string is taken too; bad requests get OpenAI's error shape.
func TestHandlerSpeaksTheProtocol(t *testing.T) {
	tab := loadSmall(t)
	srv := httptest.NewServer(Handler(tab, "glove-test"))
	defer srv.Close()
	emb := knowledge.NewOpenAIEmbedder(knowledge.OpenAIEmbedderConfig{BaseURL: srv.URL + "/v1", Model: "glove-test"})
	texts := []string{"the cat", "a dog and a car"}
	vecs, err := emb.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		want := tab.Embed(texts[i])
		if !near(v, []float64{float64(want[0]), float64(want[1]), float64(want[2])}) {
			t.Errorf("%q: %v, want %v", texts[i], v, want)
		}
	}
	for _, c := range []struct {
		method, body string
		status       int
		code         string
	}{
		{"POST", `{"model":"glove-test","input":"the cat"}`, 200, ""},
		{"POST", `{"model":"other","input":"the cat"}`, 404, "model_not_found"},
		{"POST", `{"model":"glove-test","input":[]}`, 400, ""},
		{"POST", `{"model":"glove-test","input":[1,2]}`, 400, ""},
		{"POST", `{"model":`, 400, ""},
		{"GET", ``, 405, ""},
	} {
		req, _ := http.NewRequest(c.method, srv.URL+"/v1/embeddings", strings.NewReader(c.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Data  []json.RawMessage `json:"data"`
			Error *struct {
				Message string  `json:"message"`
				Code    *string `json:"code"`
			} `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		switch {
		case resp.StatusCode != c.status:
			t.Errorf("%s %s: status %d, want %d", c.method, c.body, resp.StatusCode, c.status)
		case c.status == 200 && len(body.Data) != 1:
			t.Errorf("%s: %d vectors for one string", c.body, len(body.Data))
		case c.status != 200 && (body.Error == nil || body.Error.Message == ""):
			t.Errorf("%s %s: no error message", c.method, c.body)
		case c.code != "" && (body.Error.Code == nil || *body.Error.Code != c.code):
			t.Errorf("%s: code %v, want %s", c.body, body.Error.Code, c.code)
		}
	}
}
