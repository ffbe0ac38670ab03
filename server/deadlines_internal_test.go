package server

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestLongTransferOutlastsWriteTimeout: a response that keeps flowing for longer than
// the write timeout is cut off on an ordinary route and delivered whole on a Long one
// (backups, exports, downloads), whose deadline moves with each write.
func TestLongTransferOutlastsWriteTimeout(t *testing.T) {
	const writeTimeout = 300 * time.Millisecond
	const chunks, every = 12, 100 * time.Millisecond // 1.2 s of writing
	chunk := make([]byte, 16<<10)
	for _, long := range []bool{false, true} {
		s := New(Services{}, Config{Timeouts: Timeouts{Write: writeTimeout}})
		h := s.wrap(route{Method: http.MethodGet, Path: "/x", Public: true, Long: long, handle: func(w http.ResponseWriter, r *http.Request) error {
			for range chunks {
				if _, err := w.Write(chunk); err != nil {
					return nil
				}
				http.NewResponseController(w).Flush()
				time.Sleep(every)
			}
			return nil
		}})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		hs := &http.Server{Handler: h, WriteTimeout: writeTimeout}
		go hs.Serve(ln)
		resp, err := http.Get("http://" + ln.Addr().String() + "/x")
		var n int64
		if err == nil {
			n, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		hs.Close()
		whole := err == nil && n == int64(chunks*len(chunk))
		if whole != long {
			t.Errorf("long=%v: read %d of %d bytes (err %v)", long, n, chunks*len(chunk), err)
		}
	}
}
