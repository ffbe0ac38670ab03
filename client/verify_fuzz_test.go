package client_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/webhook"
)

// FuzzVerifyWebhook checks VerifyWebhook against the server's own signer (webhook.Sign) on
// any id, timestamp, bodies, header and clock:
//   - what the signer signs verifies, at its timestamp, and within the tolerance of it;
//   - the same signature never verifies another body (same id and timestamp);
//   - with a tolerance, a timestamp further than it from now is refused, however far
//     (even past what a time.Duration holds), signature valid or not;
//   - any signature header, timestamp text or secret is answered with nil or an error
//     wrapping ErrWebhookSignature, never a panic, and a made-up header never verifies.
func FuzzVerifyWebhook(f *testing.F) {
	f.Add("msg_p5jXN8AQM9LWM0D4loKWxJek", int64(1614265330), int64(0), []byte(`{"test": 2432232314}`), []byte(`{"test": 2432232315}`), "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", "1614265330")
	f.Add("evt_1", int64(1614265330), int64(301), []byte("{}"), []byte("{} "), "v1,bm90LWl0 v1,", "+1614265330")
	f.Add("evt_1", int64(99999999999), int64(-99999999999+1614265330), []byte("x"), []byte(""), "v2,AAAA", "99999999999")
	f.Add("evt_1", int64(-9223372036854775808), int64(0), []byte(""), []byte("y"), ",,, v1", "9223372036854775807")
	f.Add("e", int64(0), int64(1), []byte("a"), []byte("b"), "v1,!!!!", "00")
	f.Fuzz(func(t *testing.T, id string, ts, skew int64, body, other []byte, header, tsText string) {
		const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		const tolerance = 5 * time.Minute
		sig, err := webhook.Sign(secret, id, ts, body)
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{}
		h.Set("webhook-id", id)
		h.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
		h.Set("webhook-signature", sig)
		signed := id != "" && h.Get("webhook-id") == id
		if err := client.VerifyWebhook(secret, h, body, 0); signed && err != nil {
			t.Fatalf("the signer's signature for id %q, ts %d does not verify: %v", id, ts, err)
		}
		if !bytes.Equal(body, other) {
			if err := client.VerifyWebhook(secret, h, other, 0); err == nil {
				t.Fatalf("a signature for %q verified %q", body, other)
			}
		}

		now := time.Unix(ts, 0).Add(time.Duration(skew%int64(10*time.Minute/time.Second)) * time.Second)
		if ts > -1<<40 && ts < 1<<40 { // where time.Unix and Add stay exact
			off := now.Sub(time.Unix(ts, 0))
			err := client.VerifyWebhookAt(secret, h, body, tolerance, now)
			if within := off <= tolerance && -off <= tolerance; signed && within != (err == nil) {
				t.Fatalf("ts %d at %d (%s away): %v", ts, now.Unix(), off, err)
			}
		}
		// A timestamp too far from now is refused, however far.
		now = time.Unix(1614265330, 0)
		if ts < now.Unix()-300 || ts > now.Unix()+300 {
			if err := client.VerifyWebhookAt(secret, h, body, tolerance, now); err == nil {
				t.Fatalf("ts %d accepted at %d with a tolerance of %s", ts, now.Unix(), tolerance)
			}
		}

		// Headers as anyone may send them: only one holding the right MAC verifies.
		h.Set("webhook-signature", header)
		h.Set("webhook-timestamp", tsText)
		err = client.VerifyWebhookAt(secret, h, body, 0, now)
		if err != nil && !errors.Is(err, client.ErrWebhookSignature) {
			t.Fatalf("header %q, ts %q: %v does not wrap ErrWebhookSignature", header, tsText, err)
		}
		if err == nil {
			sec, perr := strconv.ParseInt(tsText, 10, 64)
			want, _ := webhook.Sign(secret, id, sec, body)
			if perr != nil || strconv.FormatInt(sec, 10) != tsText || !holdsMAC(header, want) {
				t.Fatalf("header %q with ts %q verified; the signature for that ts is %q", header, tsText, want)
			}
		}
		if err := client.VerifyWebhookAt(header, h, body, tolerance, now); err != nil && !errors.Is(err, client.ErrWebhookSignature) {
			t.Fatalf("secret %q: %v does not wrap ErrWebhookSignature", header, err)
		}
	})
}

// holdsMAC reports whether a signature header has a v1 signature whose MAC is sig's.
func holdsMAC(header, sig string) bool {
	want, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(sig, "v1,"))
	for _, s := range strings.Fields(header) {
		b64, ok := strings.CutPrefix(s, "v1,")
		got, err := base64.StdEncoding.DecodeString(b64)
		if ok && err == nil && bytes.Equal(got, want) {
			return true
		}
	}
	return false
}
