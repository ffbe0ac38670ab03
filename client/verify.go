package client

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ErrWebhookSignature is returned by VerifyWebhook for a delivery whose signature, or
// timestamp, does not hold.
var ErrWebhookSignature = errors.New("webhook signature does not verify")

// VerifyWebhook checks a delivery's Standard Webhooks signature (docs/webhooks.md): the
// webhook-signature header must hold a "v1,<base64>" HMAC-SHA256 of
// "<webhook-id>.<webhook-timestamp>.<body>" keyed with the secret's base64 part after
// "whsec_", compared in constant time, and webhook-timestamp must be within tolerance of
// now (replay protection; 0 skips the check, e.g. for a test vector). Pass the raw body,
// before any parsing. The error wraps ErrWebhookSignature.
func VerifyWebhook(secret string, headers http.Header, body []byte, tolerance time.Duration) error {
	return verifyWebhookAt(secret, headers, body, tolerance, time.Now())
}

func verifyWebhookAt(secret string, h http.Header, body []byte, tolerance time.Duration, now time.Time) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return fmt.Errorf("client: the webhook secret is not whsec_ and base64: %w", ErrWebhookSignature)
	}
	id, ts := h.Get("webhook-id"), h.Get("webhook-timestamp")
	if id == "" || ts == "" {
		return fmt.Errorf("client: webhook-id or webhook-timestamp missing: %w", ErrWebhookSignature)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("client: webhook-timestamp %q is not Unix seconds: %w", ts, ErrWebhookSignature)
	}
	if tolerance > 0 {
		// Not -d > tolerance: a timestamp centuries ahead saturates d at the least
		// Duration, whose negation is itself, and would pass.
		if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
			return fmt.Errorf("client: webhook-timestamp is %s away from now: %w", d.Round(time.Second), ErrWebhookSignature)
		}
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		version, b64, _ := strings.Cut(sig, ",")
		got, err := base64.StdEncoding.DecodeString(b64)
		if version == "v1" && err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("client: no v1 signature matches: %w", ErrWebhookSignature)
}
