package server

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

const fuzzBoundary = "voiceapi-fuzz-boundary"

// multipartSeed builds a well-formed upload body, the shape clients send.
func multipartSeed(parts ...[3]string) []byte {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	w.SetBoundary(fuzzBoundary)
	for _, p := range parts {
		if p[1] != "" {
			fw, _ := w.CreateFormFile(p[0], p[1])
			fw.Write([]byte(p[2]))
		} else {
			fw, _ := w.CreateFormField(p[0])
			fw.Write([]byte(p[2]))
		}
	}
	w.Close()
	return buf.Bytes()
}

// FuzzReadSourceParts feeds arbitrary bodies to the knowledge-base upload reader: it never
// panics, a failure is an application error of the codes the route documents (400, 413),
// what it accepts respects every part limit, and the same body always reads the same way.
func FuzzReadSourceParts(f *testing.F) {
	f.Add(multipartSeed([3]string{"files", "notes.txt", "Opening hours: 9 to 5."}, [3]string{"texts", "", "Refunds within 30 days."}, [3]string{"urls", "", "https://example.com/faq"}))
	f.Add(multipartSeed([3]string{"files[]", "a.md", "# A"}, [3]string{"files.items", "b.csv", "q,a\nx,y"}, [3]string{"texts", "Title", "body"}))
	f.Add(multipartSeed([3]string{"surprise", "", "x"}, [3]string{"texts", "", "\xff\xfe"}))
	f.Add(multipartSeed([3]string{"files", "big.txt", string(bytes.Repeat([]byte("a"), 5000))}))
	f.Add([]byte("--" + fuzzBoundary + "\r\nContent-Disposition: form-data; name=\"files\"; filename=\"x\"\r\n\r\ntruncated"))
	f.Add([]byte{})
	s := &Server{cfg: Config{MaxFileSize: 4096, MaxMultipartBody: 16384}}
	read := func(body []byte) (data.SourcesAdd, error, error) {
		req := httptest.NewRequest("POST", "/api/v1/knowledge-bases/kb/sources/add", bytes.NewReader(body))
		req.Header.Set("Content-Type", "multipart/form-data; boundary="+fuzzBoundary)
		req.Body = http.MaxBytesReader(httptest.NewRecorder(), req.Body, s.cfg.MaxMultipartBody)
		return s.readSourceParts(req)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, partErrs, err := read(body)
		if err != nil {
			if code := data.ErrorCode(err); code != data.EMALFORMED && code != data.ETOOLARGE {
				t.Fatalf("error code %q (%v)", code, err)
			}
			return
		}
		if partErrs != nil {
			if e, ok := partErrs.(*data.Error); !ok || e.Code != data.EINVALID || len(e.Fields) == 0 {
				t.Fatalf("part errors without fields: %v", partErrs)
			}
		}
		for i, f := range in.Files {
			if int64(len(f.Content)) > s.cfg.MaxFileSize {
				t.Fatalf("file %d has %d bytes, over the %d limit", i, len(f.Content), s.cfg.MaxFileSize)
			}
		}
		for i, u := range in.URLs {
			if len(u) > maxURLPart {
				t.Fatalf("url %d has %d bytes, over the part limit", i, len(u))
			}
		}
		again, againErrs, againErr := read(body)
		if againErr != nil || !reflect.DeepEqual(in, again) || (partErrs == nil) != (againErrs == nil) {
			t.Fatalf("reading the same body twice differs")
		}
	})
}
