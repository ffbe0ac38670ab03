package console

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed static templates
var files embed.FS

// asset is one embedded static file, kept plain and gzipped.
type asset struct {
	name, hash, ctype string
	plain, gz         []byte
}

// assets holds the static files by name; their URLs carry a content hash, so that they
// can be cached for a year and a new binary's files still load at once.
type assets struct {
	byName map[string]*asset
	byURL  map[string]*asset
}

func loadAssets() *assets {
	a := &assets{byName: map[string]*asset{}, byURL: map[string]*asset{}}
	entries, err := fs.ReadDir(files, "static")
	if err != nil {
		panic(err) // embedded: cannot fail in a built binary
	}
	for _, e := range entries {
		if e.IsDir() || strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		b, err := files.ReadFile("static/" + e.Name())
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(b)
		x := &asset{name: e.Name(), hash: hex.EncodeToString(sum[:6]), plain: b, gz: gzipBytes(b)}
		x.ctype = mime.TypeByExtension(path.Ext(e.Name()))
		a.byName[x.name] = x
		a.byURL[a.url(x)] = x
	}
	return a
}

func (a *assets) url(x *asset) string { return "/static/" + x.hash + "/" + x.name }

// URL returns the versioned URL of the static file name.
func (a *assets) URL(name string) string {
	x, ok := a.byName[name]
	if !ok {
		panic("console: no static file " + name) // a template names a file that is not there
	}
	return a.url(x)
}

// ServeHTTP serves a static file by its versioned URL, gzipped when the client takes it.
func (a *assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x, ok := a.byURL[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", x.ctype)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Add("Vary", "Accept-Encoding")
	body := x.plain
	if acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		body = x.gz
	}
	w.Write(body)
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(enc) == "gzip" && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}
