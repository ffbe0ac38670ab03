package llm_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/llm"
)

// deadlineTransport records the deadline of each request it carries.
type deadlineTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	left []time.Duration
}

func (d *deadlineTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if at, ok := r.Context().Deadline(); ok {
		d.mu.Lock()
		d.left = append(d.left, time.Until(at))
		d.mu.Unlock()
	}
	return d.next.RoundTrip(r)
}

// Conventions §21: "a timeout (default 60 s) is 504 provider_timeout". With no timeout
// set, every provider's request carries a deadline of llm.DefaultTimeout (60 s), and the
// operator's --llm-timeout replaces it; a deadline that was not there, or not the one
// set, would let a hung provider hold a message past its lease, or cut a slow one short.
func TestConvAuditProviderTimeoutDefault(t *testing.T) {
	if llm.DefaultTimeout != 60*time.Second {
		t.Fatalf("llm.DefaultTimeout = %s, want the 60 s of conventions §21", llm.DefaultTimeout)
	}
	eachProvider(t, allProviders, func(t *testing.T, p string) {
		for _, set := range []time.Duration{0, 7 * time.Second} {
			s := llmtest.New(t, p)
			opts := s.Options()
			rec := &deadlineTransport{next: opts.HTTPClient.Transport}
			opts.HTTPClient = &http.Client{Transport: rec}
			opts.Timeout = set
			c, err := llm.New(s.Config(), opts)
			if err != nil {
				t.Fatal(err)
			}
			s.Queue(llmtest.Text("Hello."))
			temp := 0.2
			if _, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "Hi"}},
				Temperature: &temp, MaxTokens: 50}, nil); err != nil {
				t.Fatal(err)
			}
			want := set
			if want == 0 {
				want = llm.DefaultTimeout
			}
			if len(rec.left) != 1 || rec.left[0] > want || rec.left[0] < want-5*time.Second {
				t.Errorf("timeout set %s: the request's deadlines left %v, want about %s", set, rec.left, want)
			}
		}
	})
}
