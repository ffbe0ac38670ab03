package server_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/webhook"
)

// verifyStandardWebhook is an implementation of the Standard Webhooks verification written
// apart from the server's signing code, from the specification: the key is the base64 part
// of the secret after "whsec_"; the signed content is "<webhook-id>.<webhook-timestamp>.<body>";
// webhook-signature holds space-separated "v1,<base64 HMAC-SHA256>" entries, one of which
// must match; the timestamp must be within five minutes of now.
func verifyStandardWebhook(secret string, h http.Header, body []byte, now time.Time) error {
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return errors.New("missing webhook-id, webhook-timestamp or webhook-signature")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("bad timestamp %q", ts)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return fmt.Errorf("timestamp %d too far from now", sec)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return err
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

// The specification's published test vector (standard-webhooks/standard-webhooks,
// libraries/go/webhook_test.go, TestWebhookSign).
const (
	vectorSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorMsgID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTimestamp = 1614265330
	vectorPayload   = `{"test": 2432232314}`
	vectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestStandardWebhooksVector(t *testing.T) {
	h := http.Header{}
	h.Set("webhook-id", vectorMsgID)
	h.Set("webhook-timestamp", strconv.Itoa(vectorTimestamp))
	h.Set("webhook-signature", "v1,bm90IHRoaXMgb25l "+vectorSignature)
	at := time.Unix(vectorTimestamp, 0)
	if err := verifyStandardWebhook(vectorSecret, h, []byte(vectorPayload), at); err != nil {
		t.Fatalf("the test's verifier rejects the published vector: %v", err)
	}
	if err := verifyStandardWebhook(vectorSecret, h, []byte(`{"test": 2432232315}`), at); err == nil {
		t.Fatal("the test's verifier accepts an altered body")
	}
	got, err := webhook.Sign(vectorSecret, vectorMsgID, vectorTimestamp, []byte(vectorPayload))
	if err != nil || got != vectorSignature {
		t.Fatalf("Sign = %q, %v; want %q", got, err, vectorSignature)
	}
}

// received is one post the receiver accepted as correctly signed.
type received struct {
	ID, Type, Timestamp string
	Body                map[string]any
}

// receiver is a loopback webhook endpoint that checks every signature independently.
// answer picks the status of the n-th post (1-based); 200 when nil.
type receiver struct {
	t      testing.TB
	srv    *httptest.Server
	mu     sync.Mutex
	secret string
	posts  int
	got    []received
	bad    []string
	answer func(n int) int
}

func newReceiver(t testing.TB, answer func(n int) int) *receiver {
	rc := &receiver{t: t, answer: answer}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) setSecret(s string) {
	rc.mu.Lock()
	rc.secret = s
	rc.mu.Unlock()
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.posts++
	if err := verifyStandardWebhook(rc.secret, r.Header, body, time.Now()); err != nil {
		rc.bad = append(rc.bad, err.Error())
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		rc.bad = append(rc.bad, "Content-Type "+ct)
	}
	status := http.StatusOK
	if rc.answer != nil {
		status = rc.answer(rc.posts)
	}
	var env map[string]any
	if err := json.Unmarshal(body, &env); err != nil {
		rc.bad = append(rc.bad, "body is not JSON")
	}
	if env["id"] != r.Header.Get("webhook-id") {
		rc.bad = append(rc.bad, fmt.Sprintf("webhook-id %s is not the event id %v", r.Header.Get("webhook-id"), env["id"]))
	}
	typ, _ := env["type"].(string)
	if status < 300 {
		rc.got = append(rc.got, received{ID: r.Header.Get("webhook-id"), Type: typ, Timestamp: r.Header.Get("webhook-timestamp"), Body: env})
	}
	w.WriteHeader(status)
}

// snapshot returns what was accepted, the post count, and the signature failures.
func (rc *receiver) snapshot() ([]received, int, []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...), rc.posts, append([]string(nil), rc.bad...)
}

// startDispatcher runs a dispatcher on e's database with a tiny retry schedule, allowed to
// post to loopback; it is stopped before the database closes. Its post timeout is only a
// hang guard: these receivers always answer, and a post cut short on a loaded machine
// would be retried, a second post that the tests' exact counts would take for a fault.
func startDispatcher(t testing.TB, e *env, schedule ...time.Duration) *webhook.Dispatcher {
	if schedule == nil {
		schedule = []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond}
	}
	d := webhook.NewDispatcher(cli.NewServices(e.DB).Deliveries, webhook.Config{AllowPrivate: true, Schedule: schedule, Workers: 4, Timeout: 30 * time.Second,
		Logger: slog.New(slog.NewJSONHandler(e.Logs, nil))})
	e.DB.SetEventHook(d.Wake)
	d.Start(context.Background())
	t.Cleanup(func() {
		e.DB.SetEventHook(nil)
		d.Stop(context.Background())
	})
	return d
}
