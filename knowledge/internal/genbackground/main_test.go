package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestWords(t *testing.T) {
	tests := []struct {
		name, file, content string
		n                   int
		want                []string
		fails               bool
	}{
		{"wink's JSON, words after another key", "v.json", `{"precision":8,"dims":[1,2],"words":["the",",","use"],"vectors":[[0.1]]}`, 3, []string{"the", ",", "use"}, false},
		{"JSON without words", "v.json", `{"precision":8}`, 1, nil, true},
		{"GloVe's text format", "glove.txt", "the 0.1 0.2\nuse 0.3 0.4\nway 0.5 0.6\n", 2, []string{"the", "use"}, false},
		{"too few words", "glove.txt", "the 0.1\n", 2, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			in, out := filepath.Join(dir, tt.file), filepath.Join(dir, "bg.txt.gz")
			if err := os.WriteFile(in, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			var words []string
			f, _ := os.Open(in)
			defer f.Close()
			if strings.HasSuffix(tt.file, ".json") {
				words, _ = jsonWords(f)
			} else {
				words, _ = textWords(f, tt.n)
			}
			err := run(in, tt.n, out)
			if tt.fails {
				if err == nil {
					t.Fatalf("run succeeded, want an error")
				}
				if _, statErr := os.Stat(out); statErr == nil {
					t.Error("a table was written for a bad input")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(words[:tt.n], tt.want) {
				t.Errorf("words %q, want %q", words, tt.want)
			}
			table, err := os.ReadFile(out)
			if err != nil || !bytes.HasPrefix(table, []byte{0x1f, 0x8b}) {
				t.Errorf("table %d bytes, err %v: want a gzip file", len(table), err)
			}
		})
	}
}
