package conversation

import (
	"testing"
	"time"
)

// Conventions §21: "custom_function performs the real HTTP request (...; the tool's
// timeout, else 10 s)". A tool with no timeout, or 0, gets DefaultFunctionTimeout, which
// is 10 s; TestCustomFunctionTimeoutCapped holds a timeout that is set.
func TestConvAuditCustomFunctionDefaultTimeout(t *testing.T) {
	if DefaultFunctionTimeout != 10*time.Second {
		t.Fatalf("DefaultFunctionTimeout = %s, want the 10 s of conventions §21", DefaultFunctionTimeout)
	}
	for _, timeout := range []*int{nil, intp(0)} {
		left := functionTimeLeft(t, timeout)
		if left > DefaultFunctionTimeout || left < DefaultFunctionTimeout-5*time.Second {
			t.Errorf("timeout %v: the call had %s left, want about %s", timeout, left, DefaultFunctionTimeout)
		}
	}
}
