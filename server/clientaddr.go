package server

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ParseTrustedProxies parses --trusted-proxies: CIDR ranges (or single addresses),
// comma-separated or given one by one. An empty list trusts no proxy.
func ParseTrustedProxies(values []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, v := range values {
		for s := range strings.SplitSeq(v, ",") {
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			if !strings.Contains(s, "/") {
				a, err := netip.ParseAddr(s)
				if err != nil {
					return nil, fmt.Errorf("%q is neither a CIDR range (10.0.0.0/8, fd00::/8) nor an address", s)
				}
				out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
				continue
			}
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return nil, fmt.Errorf("%q is not a CIDR range such as 10.0.0.0/8 or fd00::/8: %v", s, err)
			}
			if p.Addr().Is4In6() {
				// ::ffff:10.0.0.0/104 is 10.0.0.0/8: peers are compared unmapped.
				if p.Bits() < 96 {
					return nil, fmt.Errorf("%q mixes IPv4-mapped and IPv6 addresses", s)
				}
				p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
			}
			out = append(out, p.Masked())
		}
	}
	return out, nil
}

// trusts reports whether a is one of the trusted proxies.
func (s *Server) trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientAddr is the one place that decides a request's client address, for login rate
// limits, request logs and event data. It is the TCP peer, unless the peer is a trusted
// proxy (--trusted-proxies): then it is the right-most address of the Forwarded (RFC
// 7239) or, without one, X-Forwarded-For chain that is not itself a trusted proxy. Every
// hop to the right of that address is a proxy we trust to have appended what it saw;
// anything to its left could have been written by the client, so it is never read. From
// an untrusted peer the headers are ignored: any client could forge them to escape the
// login limit or to blame another address.
func (s *Server) clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil || len(s.cfg.TrustedProxies) == 0 || !s.trusts(peer) {
		return host
	}
	chain := forwardedFor(r.Header)
	if chain == nil {
		chain = xForwardedFor(r.Header)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		a, ok := parseHop(chain[i])
		if !ok {
			// A trusted proxy wrote a hop that is no address ("unknown", an obfuscated
			// name): the client is unknown beyond it, so the proxy is the address.
			return peer.Unmap().String()
		}
		if !s.trusts(a) || i == 0 {
			return a.String()
		}
	}
	return peer.Unmap().String()
}

// forwardedFor returns the for= values of the Forwarded headers, in order; nil when there
// is no Forwarded header.
func forwardedFor(h http.Header) []string {
	lines := h.Values("Forwarded")
	if len(lines) == 0 {
		return nil
	}
	chain := []string{}
	for _, line := range lines {
		for elem := range strings.SplitSeq(line, ",") {
			for pair := range strings.SplitSeq(elem, ";") {
				k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if ok && strings.EqualFold(strings.TrimSpace(k), "for") {
					chain = append(chain, strings.Trim(strings.TrimSpace(v), `"`))
				}
			}
		}
	}
	return chain
}

// xForwardedFor returns the addresses of the X-Forwarded-For headers, in order.
func xForwardedFor(h http.Header) []string {
	var chain []string
	for _, line := range h.Values("X-Forwarded-For") {
		for hop := range strings.SplitSeq(line, ",") {
			chain = append(chain, strings.TrimSpace(hop))
		}
	}
	return chain
}

// parseHop reads one hop of a chain: an address, with or without a port, IPv6 in
// brackets or bare.
func parseHop(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil {
			return a.Unmap(), true
		}
	}
	return netip.Addr{}, false
}
