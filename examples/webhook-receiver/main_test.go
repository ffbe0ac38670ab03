package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The Standard Webhooks specification's published test vector
// (standard-webhooks/standard-webhooks, libraries/go/webhook_test.go).
const (
	vectorSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTimestamp = 1614265330
	vectorBody      = `{"test": 2432232314}`
	vectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func vectorHeader(sig string) http.Header {
	h := http.Header{}
	h.Set("webhook-id", vectorID)
	h.Set("webhook-timestamp", strconv.Itoa(vectorTimestamp))
	h.Set("webhook-signature", sig)
	return h
}

func TestVerify(t *testing.T) {
	at := time.Unix(vectorTimestamp, 0)
	for _, tc := range []struct {
		name string
		h    http.Header
		body string
		now  time.Time
		want string // "" for success, else a part of the error
	}{
		{"the vector", vectorHeader(vectorSignature), vectorBody, at, ""},
		{"the vector among other signatures", vectorHeader("v1,bm90IHRoaXMgb25l " + vectorSignature), vectorBody, at, ""},
		{"five minutes late, at the edge", vectorHeader(vectorSignature), vectorBody, at.Add(5 * time.Minute), ""},
		{"five minutes and a second late", vectorHeader(vectorSignature), vectorBody, at.Add(5*time.Minute + time.Second), "five minutes"},
		{"five minutes and a second early", vectorHeader(vectorSignature), vectorBody, at.Add(-5*time.Minute - time.Second), "five minutes"},
		{"a changed body", vectorHeader(vectorSignature), `{"test": 2432232315}`, at, "no signature"},
		{"another version", vectorHeader(strings.Replace(vectorSignature, "v1,", "v2,", 1)), vectorBody, at, "no signature"},
		{"no signature", vectorHeader(""), vectorBody, at, "missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := verify(vectorSecret, tc.h, []byte(tc.body), tc.now)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("verify: %v, want %q", err, tc.want)
			}
		})
	}
	// The secret is read from its file at each delivery; before the file exists, refuse.
	path := filepath.Join(t.TempDir(), "whsec")
	if err := verifyFromFile(path, vectorHeader(vectorSignature), []byte(vectorBody), at); err == nil || !strings.Contains(err.Error(), "no secret yet") {
		t.Errorf("without the file: %v", err)
	}
	os.WriteFile(path, []byte(vectorSecret+"\n"), 0o600)
	if err := verifyFromFile(path, vectorHeader(vectorSignature), []byte(vectorBody), at); err != nil {
		t.Errorf("with the file: %v", err)
	}
}
