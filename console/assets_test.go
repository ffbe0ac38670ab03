package console_test

import (
	"compress/gzip"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
)

var assetURL = regexp.MustCompile(`(?:href|src)="(/static/[0-9a-f]{12}/[^"]+)"`)

// TestFirstPageWeight fetches the sign-in page and every file it loads, compressed as a
// browser would, and holds the total under 150 KB; each file is versioned by its hash and
// cached for a year.
func TestFirstPageWeight(t *testing.T) {
	e := testenv.Start(t)
	total := 0
	fetch := func(path string) ([]byte, http.Header) {
		req, _ := http.NewRequest("GET", e.URL+path, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		// A transport that does not decompress on its own, so that the wire size is seen.
		res, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("%s: %d, Content-Encoding %q", path, res.StatusCode, res.Header.Get("Content-Encoding"))
		}
		total += len(raw)
		zr, err := gzip.NewReader(strings.NewReader(string(raw)))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		plain, _ := io.ReadAll(zr)
		return plain, res.Header
	}
	page, _ := fetch("/login")
	urls := assetURL.FindAllStringSubmatch(string(page), -1)
	if len(urls) < 3 {
		t.Fatalf("the sign-in page loads %d files, want the stylesheet and two scripts", len(urls))
	}
	for _, m := range urls {
		_, h := fetch(m[1])
		if cc := h.Get("Cache-Control"); !strings.Contains(cc, "max-age=31536000") || !strings.Contains(cc, "immutable") {
			t.Errorf("%s: Cache-Control %q", m[1], cc)
		}
	}
	if total >= 150_000 {
		t.Errorf("the first page transfers %d bytes compressed, want under 150 KB", total)
	}
	t.Logf("first page: %d bytes compressed, %d files", total, len(urls)+1)

	// An unknown hash is not served (a stale URL must not get another version's bytes).
	if res := e.Do(nil, "GET", "/static/000000000000/console.css", "", nil); res.Status != http.StatusNotFound {
		t.Errorf("a wrong hash: %d", res.Status)
	}
}
