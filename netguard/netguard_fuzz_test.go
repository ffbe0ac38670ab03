package netguard

import (
	"net"
	"net/netip"
	"net/url"
	"path"
	"strings"
	"testing"
)

// internalByNetip is the oracle of FuzzGuardControl: net/netip's own classification of a,
// of a unmapped and of the IPv4 address an IPv6 transition form carries (NAT64, the
// deprecated IPv4-compatible ::/96, 6to4), plus any scoped address. It is narrower than
// blockedAddr (which also refuses carrier-grade NAT, documentation and reserved ranges), so
// the property is one-way: the guard refuses at least what net/netip calls internal. Teredo
// and IPv4-translated addresses count as internal whatever they carry: where they lead is
// up to a tunnel or translator on the way (see teredoPrefix).
func internalByNetip(a netip.Addr) bool {
	if a.Zone() != "" {
		return true
	}
	if b := a.As16(); a.Is6() && (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0 ||
		[12]byte(b[:12]) == [12]byte{8: 0xff, 9: 0xff}) {
		return true // 2001::/32 and ::ffff:0:0:0/96, spelled out here
	}
	forms := []netip.Addr{a, a.Unmap()}
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64Prefix.Contains(a), ipv4Compat96.Contains(a):
			forms = append(forms, netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(a):
			forms = append(forms, netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	for _, f := range forms {
		if f.IsLoopback() || f.IsPrivate() || f.IsLinkLocalUnicast() || f.IsLinkLocalMulticast() ||
			f.IsInterfaceLocalMulticast() || f.IsMulticast() || f.IsUnspecified() {
			return true
		}
	}
	return false
}

// FuzzGuardControl feeds the dialer's hook every host text: the hook sees what the
// resolver made of a URL's host, so whatever form the URL wrote (decimal, octal or hex IPv4
// shorthand, a trailing dot) arrives here as an address or is refused. The property: an
// address the hook lets through parses as an IP and is not loopback, private, link-local,
// multicast, unspecified or scoped by net/netip's judgement, nor carries such an IPv4
// address in a mapped, compatible, NAT64 or 6to4 form, nor is a Teredo or IPv4-translated
// address (refused whatever they carry); and a host that is not an IP
// address is never let through.
func FuzzGuardControl(f *testing.F) {
	for _, s := range []string{
		"127.0.0.1", "10.0.0.1", "172.32.0.1", "169.254.169.254", "100.100.100.200", "8.8.8.8",
		"::1", "::", "fd00:ec2::254", "fe80::1%eth0", "ff02::1", "::ffff:127.0.0.1", "::ffff:8.8.8.8",
		"64:ff9b::7f00:1", "64:ff9b::808:808", "64:ff9b:1::1", "2002:7f00:1::", "2002:a00:1::1",
		"::127.0.0.1", "::a00:1", "0:0:0:0:0:ffff:7f00:1", "2606:4700:4700::1111", "::ffff:0:7f00:1",
		"2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001:0:7f00:1::", "::ffff:0:808:808",
		"0177.0.0.1", "0x7f.1", "2130706433", "127.1", "localhost", "127.0.0.1.", "[::1]", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		err := guardControl("tcp", net.JoinHostPort(host, "443"), nil)
		if err != nil {
			return
		}
		a, perr := netip.ParseAddr(host)
		if perr != nil {
			t.Fatalf("host %q is not an IP address (%v) yet the guard let it through", host, perr)
		}
		if internalByNetip(a) {
			t.Fatalf("the guard let %s through, an internal address by net/netip", a)
		}
		// Every spelling of the same address gets the same answer.
		for _, s := range []string{a.String(), a.StringExpanded(), netip.AddrFrom16(a.As16()).String()} {
			if err := guardControl("tcp", net.JoinHostPort(s, "443"), nil); err != nil {
				t.Fatalf("%q let through but its spelling %q refused: %v", host, s, err)
			}
		}
	})
}

// servedPath is the path a server reading u's escaped path may act on: percent-decoded once,
// backslashes taken as slashes and segments' ";parameters" dropped (as some servers do),
// dot segments resolved. ok is false when the path cannot be decoded.
func servedPath(escaped string) (p string, ok bool) {
	s, err := url.PathUnescape(escaped)
	if err != nil {
		return "", false
	}
	segs := strings.Split(strings.ReplaceAll(s, `\`, "/"), "/")
	for i, seg := range segs {
		segs[i], _, _ = strings.Cut(seg, ";")
	}
	return path.Clean("/" + strings.Join(segs, "/")), true
}

// FuzzPrefixMatches checks the allowed-prefix router (--allow-url-prefix): a URL it sends
// past the guard has the prefix's scheme and host, no user part, and a path that, however
// a server decodes and resolves it, stays the prefix's path or lies under it. So no
// escaped dot segment, escaped slash or backslash leads an allowed URL out of its prefix.
func FuzzPrefixMatches(f *testing.F) {
	for _, c := range [][2]string{
		{"http://127.0.0.1:11434/models/", "http://127.0.0.1:11434/models/v1/chat"},
		{"http://127.0.0.1:11434/models/", "http://127.0.0.1:11434/models/../admin"},
		{"http://127.0.0.1:11434/models/", "http://127.0.0.1:11434/models/%2e%2e/admin"},
		{"http://127.0.0.1:11434/models/", "http://127.0.0.1:11434/models/%2E%2E/admin"},
		{"http://127.0.0.1:11434/models/", "http://127.0.0.1:11434/models/x%2f..%2f..%2fadmin"},
		{"http://127.0.0.1:11434/models/", `http://127.0.0.1:11434/models/x\..\..\admin`},
		{"http://127.0.0.1:11434/models/", "http://127.0.0.1:11434/models/./v1"},
		{"http://127.0.0.1:11434/models/", "http://127.0.0.1:11434/models/..;/admin"},
		{"http://Host:80/v1", "http://host:80/v1/x"},
		{"http://host/exact", "http://host/exactly"},
		{"https://models.internal/v1/", "https://user@models.internal/v1/"},
		{"http://localhost", "http://localhost/anything"},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, prefix, raw string) {
		p, err := parseURLPrefix(prefix)
		if err != nil {
			return
		}
		u, err := url.Parse(raw)
		if err != nil || !p.matches(u) {
			return
		}
		if u.Scheme != p.scheme || !strings.EqualFold(u.Host, p.host) || u.User != nil {
			t.Fatalf("%q matched prefix %q with another scheme, host or a user", raw, prefix)
		}
		if p.path == "" || p.path == "/" {
			return
		}
		served, ok := servedPath(u.EscapedPath())
		if !ok {
			t.Fatalf("%q matched prefix %q with a path that cannot be decoded", raw, prefix)
		}
		base, _ := servedPath(p.path)
		if served != base && !strings.HasPrefix(served, strings.TrimSuffix(base, "/")+"/") {
			t.Fatalf("%q matched prefix %q but a server may serve %q, outside %q", raw, prefix, served, base)
		}
	})
}
