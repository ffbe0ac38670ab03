package netguard_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/netguard"
)

// A URL whose host does not resolve fails with an error that does not name the server's
// DNS resolver: the error reaches whoever gave the URL (a webhook's delivery records show
// it), and the resolver's address ("lookup x on 10.0.0.53:53: no such host") is a detail
// of the server's network.
func TestFailedLookupHidesTheResolver(t *testing.T) {
	const host = "voiceapi-no-such-host.invalid"
	_, err := net.DefaultResolver.LookupHost(context.Background(), host)
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || dnsErr.Server == "" {
		t.Skipf("this machine's resolver names no server in its errors (%v): nothing to hide", err)
	}
	for _, allowPrivate := range []bool{false, true} {
		_, err := netguard.NewClient(netguard.Options{AllowPrivate: allowPrivate}).Get("http://" + host + "/")
		if err == nil {
			t.Fatalf("allowPrivate=%v: %s answered", allowPrivate, host)
		}
		if strings.Contains(err.Error(), dnsErr.Server) || !strings.Contains(err.Error(), host) {
			t.Errorf("allowPrivate=%v: %v names the resolver %s, or not the host", allowPrivate, err, dnsErr.Server)
		}
	}
}

// Concurrent dials of one name share the resolver's error for it: hiding the resolver must
// not write to that shared error (a data race under -race, seen in the webhook dispatcher).
func TestFailedLookupsAtOnceShareNoError(t *testing.T) {
	const host = "voiceapi-no-such-host-at-once.invalid"
	_, err := net.DefaultResolver.LookupHost(context.Background(), host)
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || dnsErr.Server == "" {
		t.Skipf("this machine's resolver names no server in its errors (%v): nothing to hide", err)
	}
	client := netguard.NewClient(netguard.Options{})
	errs := make(chan error, 16)
	for range cap(errs) {
		go func() {
			_, err := client.Get("http://" + host + "/")
			errs <- err
		}()
	}
	for range cap(errs) {
		if err := <-errs; err == nil || strings.Contains(err.Error(), dnsErr.Server) {
			t.Errorf("%v: want a failure that does not name the resolver %s", err, dnsErr.Server)
		}
	}
}
