// Command webhook-receiver is a minimal endpoint for voiceapi's webhooks: it checks each
// delivery's Standard Webhooks signature and prints one line per delivery. docs/tour.md
// starts it; copy it as the skeleton of a real receiver.
//
//	go run ./examples/webhook-receiver --addr 127.0.0.1:0 --secret-file whsec.txt
//
// It prints "listening on http://HOST:PORT" first (with the port chosen when --addr ends
// in :0), then for each delivery "<webhook-id> <event type> signature ok" and answers 200,
// or "<webhook-id> rejected: <why>" and answers 401, which voiceapi retries.
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "listen address HOST:PORT (port 0 picks a free one)")
	secretFile := flag.String("secret-file", "", "file holding the webhook's signing secret (whsec_…), read at each delivery, so the receiver can start before the webhook exists")
	flag.Parse()
	if *secretFile == "" {
		log.Fatal("--secret-file is required")
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	var mu sync.Mutex // one line per delivery, even when voiceapi posts several at once
	handler := func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		id := r.Header.Get("webhook-id")
		if err == nil {
			err = verifyFromFile(*secretFile, r.Header, body, time.Now())
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			fmt.Printf("%s rejected: %v\n", id, err)
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var event struct {
			Type string `json:"type"`
		}
		json.Unmarshal(body, &event)
		fmt.Printf("%s %s signature ok\n", id, event.Type)
	}
	srv := &http.Server{Handler: http.HandlerFunc(handler), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.Serve(ln))
}

// verifyFromFile reads the secret and verifies the delivery with it.
func verifyFromFile(path string, h http.Header, body []byte, now time.Time) error {
	secret, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("no secret yet: %w", err)
	}
	return verify(strings.TrimSpace(string(secret)), h, body, now)
}

// verify checks a Standard Webhooks signature: HMAC-SHA256 keyed with the base64 part of
// the secret after "whsec_", over "<webhook-id>.<webhook-timestamp>.<body>", compared in
// constant time with each "v1," signature of the header; a timestamp more than five
// minutes from now is refused, so a captured delivery cannot be replayed later.
func verify(secret string, h http.Header, body []byte, now time.Time) error {
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return errors.New("missing webhook-id, webhook-timestamp or webhook-signature")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("bad webhook-timestamp %q", ts)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return fmt.Errorf("webhook-timestamp %d is more than five minutes from now", sec)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return fmt.Errorf("the secret is not whsec_ and base64: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	io.WriteString(mac, id+"."+ts+".")
	mac.Write(body)
	want := mac.Sum(nil)
	for _, s := range strings.Fields(sigs) {
		version, b64, _ := strings.Cut(s, ",")
		got, err := base64.StdEncoding.DecodeString(b64)
		if version == "v1" && err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return errors.New("no signature matches")
}
