// Package netguard is the SSRF guard of conventions §14: every URL voiceapi fetches or posts
// to on behalf of a client (knowledge base urls, webhooks, embedding providers, model
// servers, custom functions) goes through NewClient, which refuses to connect to loopback,
// private and other internal addresses unless the operator allowed them (Guard), and
// CheckURL, which checks such a URL's form before it is stored.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// ErrForbiddenAddress is wrapped by the error of a request whose host resolves to an address
// the guard refuses.
var ErrForbiddenAddress = errors.New("destination address not allowed")

// ErrResponseTooLarge is wrapped by ReadLimited's error when the body passes its limit.
var ErrResponseTooLarge = errors.New("response too large")

// Defaults and bounds of Options and CheckURL.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultMaxRedirects = 5
	MaxURLLength        = 2048
)

// Options configures NewClient.
type Options struct {
	// AllowPrivate lifts the address check (--allow-private-urls), for development and for
	// operators whose sources live on their own network.
	AllowPrivate bool
	// Timeout bounds a whole request, redirects and body included; 0 means 10 s.
	Timeout time.Duration
	// MaxRedirects is how many redirects are followed; 0 means 5, a negative value none.
	MaxRedirects int
	// MaxIdleConnsPerHost is how many idle connections to one host are kept for reuse; 0
	// means net/http's default of 2. A client posting from many workers to one busy
	// receiver wants one per worker, or all but two dial anew for every request.
	MaxIdleConnsPerHost int
	// AllowURLPrefixes let requests whose URL starts with one of them reach internal
	// addresses (--allow-url-prefix), e.g. http://127.0.0.1:11434/ for a model server on
	// the same host, while every other URL stays guarded. Each must pass CheckURLPrefix.
	AllowURLPrefixes []string
}

// blockedPrefixes are the ranges no outbound request may reach unless AllowPrivate: the
// machine itself, private networks, link-local (where cloud metadata services live, e.g.
// 169.254.169.254 and fd00:ec2::254 inside fc00::/7), carrier-grade NAT (Alibaba's metadata
// at 100.100.100.200), multicast, and reserved or documentation ranges no public host uses.
var blockedPrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
		"172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
		"::/128", "::1/128", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8", "2001:db8::/32",
		"100::/64",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// Prefixes of IPv6 transition schemes that carry an IPv4 address, which is checked in turn:
// NAT64 (the last 32 bits) and 6to4 (bits 16 to 48).
var (
	nat64Prefix  = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local   = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour    = netip.MustParsePrefix("2002::/16")
	ipv4Compat96 = netip.MustParsePrefix("::/96") // deprecated IPv4-compatible addresses
)

// Transition prefixes refused outright rather than decoded. Neither is decoded by the
// kernel: a connection goes out on the IPv6 default route, and what it reaches is decided
// by a translator or tunnel on the way, where the guard cannot see it. Teredo (2001::/32,
// RFC 4380) reaches the client through its NAT's mapped port at an obfuscated IPv4 address,
// by way of a Teredo server also named in the address, so no one IPv4 address could be
// checked; a stateless translator (SIIT, RFC 6145) maps an IPv4-translated address
// (::ffff:0:a.b.c.d) to a.b.c.d, an internal address as readily as a public one. No public
// service is reached through either (Teredo's relays are retired, ::ffff:0:0/96 is never
// routed on the internet), so refusing them costs nothing.
var (
	teredoPrefix     = netip.MustParsePrefix("2001::/32")
	ipv4Translated96 = netip.MustParsePrefix("::ffff:0:0:0/96")
)

// blockedAddr reports why ip may not be reached, or "" when it may.
func blockedAddr(ip netip.Addr) string {
	if ip.Zone() != "" { // before Unmap, which drops the zone of ::ffff:1.2.3.4%eth0
		return "a scoped (link-local) address"
	}
	ip = ip.Unmap() // ::ffff:127.0.0.1 is 127.0.0.1
	for _, p := range blockedPrefixes {
		if p.Contains(ip) {
			return "an internal address (" + p.String() + ")"
		}
	}
	if ip.Is6() {
		b := ip.As16()
		var embedded netip.Addr
		switch {
		case nat64Prefix.Contains(ip), ipv4Compat96.Contains(ip):
			embedded = netip.AddrFrom4([4]byte(b[12:16]))
		case nat64Local.Contains(ip):
			return "a local NAT64 address"
		case teredoPrefix.Contains(ip):
			return "a Teredo address (2001::/32)"
		case ipv4Translated96.Contains(ip):
			return "an IPv4-translated address (::ffff:0:0:0/96)"
		case sixToFour.Contains(ip):
			embedded = netip.AddrFrom4([4]byte(b[2:6]))
		}
		if embedded.IsValid() {
			if r := blockedAddr(embedded); r != "" {
				return r + " embedded in an IPv6 address"
			}
		}
	}
	return ""
}

// NewClient returns an HTTP client for requests to client-supplied URLs. The address
// check runs in the dialer's Control hook, on the IP actually being connected to after DNS
// resolution, so a name that resolves to a public address when validated and to 127.0.0.1 when
// fetched (DNS rebinding) is still refused, and so is every redirect hop. Proxies from the
// environment are ignored: through a proxy the check would see the proxy's address, not the
// destination's.
func NewClient(opts Options) *http.Client {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	maxRedirects := opts.MaxRedirects
	if maxRedirects == 0 {
		maxRedirects = DefaultMaxRedirects
	}
	var next http.RoundTripper = newTransport(opts, timeout, !opts.AllowPrivate)
	if !opts.AllowPrivate && len(opts.AllowURLPrefixes) > 0 {
		// Allowed prefixes get a transport of their own, so that a connection dialed for
		// one is never reused for a guarded URL of the same host.
		r := prefixRouter{guarded: next, open: newTransport(opts, timeout, false)}
		for _, p := range opts.AllowURLPrefixes {
			if u, err := parseURLPrefix(p); err == nil {
				r.prefixes = append(r.prefixes, u)
			}
		}
		next = r
	}
	return &http.Client{
		Timeout:   timeout,
		Transport: schemeGuard{next},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects || maxRedirects < 0 {
				return fmt.Errorf("stopped after %d redirects", max(0, maxRedirects))
			}
			if Origin(via[0].URL) != Origin(req.URL) {
				dropCredentialHeaders(req.Header)
			}
			return CheckURL(req.URL.String())
		},
	}
}

// keptAcrossOrigins are the request headers a redirect to another origin still carries.
// Go drops Authorization and cookies there, but not the other headers a credential
// travels in (Azure's api-key, a custom function's own headers), so every header but
// these is dropped: a server that redirects must not receive the keys meant for it.
var keptAcrossOrigins = map[string]bool{
	"Accept": true, "Accept-Language": true, "Content-Type": true, "User-Agent": true,
}

func dropCredentialHeaders(h http.Header) {
	for name := range h {
		if !keptAcrossOrigins[http.CanonicalHeaderKey(name)] {
			delete(h, name)
		}
	}
}

// Origin is u's scheme, host and port, lower-cased, with the scheme's default port filled
// in: two URLs of one origin reach the same server.
func Origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

func newTransport(opts Options, timeout time.Duration, guarded bool) *http.Transport {
	dialer := &net.Dialer{Timeout: min(timeout, 5*time.Second), KeepAlive: 30 * time.Second}
	if guarded {
		dialer.Control = guardControl
	}
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           dialHidingResolver(dialer),
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          max(20, 4*opts.MaxIdleConnsPerHost),
		MaxIdleConnsPerHost:   opts.MaxIdleConnsPerHost,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: timeout,
		ExpectContinueTimeout: time.Second,
	}
}

// dialHidingResolver dials as dialer does, but a failed lookup's error no longer names the
// resolver that answered it ("lookup x on 10.0.0.53:53: no such host"): the error reaches
// whoever gave the URL (a webhook's deliveries, a source's failure), and the address of
// the server's own DNS resolver is a detail of its network they have no need of.
func dialHidingResolver(dialer *net.Dialer) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		conn, err := dialer.DialContext(ctx, network, address)
		return conn, withoutResolver(err)
	}
}

// withoutResolver returns err with its lookup error's resolver removed, on a copy: the
// resolver shares one lookup's error among the concurrent dials of the same name, so
// clearing it in place is a data race.
func withoutResolver(err error) error {
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || dnsErr.Server == "" {
		return err
	}
	hidden := *dnsErr
	hidden.Server = ""
	if op, ok := err.(*net.OpError); ok && op.Err == error(dnsErr) {
		dial := *op
		dial.Err = &hidden
		return &dial
	}
	return &hidden
}

// guardControl refuses the connection before it is made when the resolved address is internal.
func guardControl(network, address string, _ syscall.RawConn) error {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return fmt.Errorf("%w: network %q", ErrForbiddenAddress, network)
	}
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrForbiddenAddress, err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("%w: %q is not an IP address", ErrForbiddenAddress, host)
	}
	if reason := blockedAddr(ip); reason != "" {
		return fmt.Errorf("%w: %s is %s", ErrForbiddenAddress, ip, reason)
	}
	return nil
}

// schemeGuard refuses any scheme but http and https, whatever the transport supports.
type schemeGuard struct{ next http.RoundTripper }

func (g schemeGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	if s := req.URL.Scheme; s != "http" && s != "https" {
		return nil, fmt.Errorf("outbound requests must use http or https, not %q", s)
	}
	return g.next.RoundTrip(req)
}

// CheckURL validates a client-supplied URL before it is stored or fetched: absolute,
// http or https, a host, no user:password part (credentials would be stored and logged in the
// clear), a valid port, at most 2048 characters. It does not resolve the host: the address is
// checked when connecting, by the client of NewClient.
func CheckURL(raw string) error {
	if utf8.RuneCountInString(raw) > MaxURLLength {
		return fmt.Errorf("the URL is longer than %d characters", MaxURLLength)
	}
	if strings.TrimSpace(raw) != raw || strings.ContainsAny(raw, " \t\r\n") {
		return errors.New("the URL contains whitespace")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("the URL cannot be parsed: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("the URL must start with http:// or https://")
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return errors.New("the URL must name a host")
	}
	if u.User != nil {
		return errors.New("the URL must not contain a user name or password")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("the URL has an invalid port %q", p)
		}
	}
	return nil
}

// ReadLimited reads r to the end, failing with an error wrapping ErrResponseTooLarge as soon as more
// than max bytes arrive: the rest is never buffered.
func ReadLimited(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrResponseTooLarge, max)
	}
	return b, nil
}
