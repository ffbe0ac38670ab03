package server

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestParseTrustedProxies(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string // the prefixes, space-separated; "error" when refused
	}{
		{nil, ""},
		{[]string{""}, ""},
		{[]string{"10.0.0.0/8"}, "10.0.0.0/8"},
		{[]string{"10.1.2.3/8, 192.168.0.0/16"}, "10.0.0.0/8 192.168.0.0/16"},
		{[]string{"fd00::/8", "127.0.0.1"}, "fd00::/8 127.0.0.1/32"},
		{[]string{"::1"}, "::1/128"},
		{[]string{"::ffff:10.0.0.0/104"}, "10.0.0.0/8"},
		{[]string{"10.0.0.0/33"}, "error"},
		{[]string{"10.0.0/8"}, "error"},
		{[]string{"proxy.local"}, "error"},
		{[]string{"10.0.0.0/8,nonsense"}, "error"},
	} {
		ps, err := ParseTrustedProxies(c.in)
		var got []string
		for _, p := range ps {
			got = append(got, p.String())
		}
		if c.want == "error" {
			if err == nil {
				t.Errorf("%q: accepted as %v", c.in, got)
			}
			continue
		}
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("%q: got %v, %v; want %s", c.in, got, err, c.want)
		}
	}
}

func TestClientAddr(t *testing.T) {
	proxies, err := ParseTrustedProxies([]string{"10.0.0.0/8", "fd00::/8"})
	if err != nil {
		t.Fatal(err)
	}
	trusting := &Server{cfg: Config{TrustedProxies: proxies}}
	trustingNone := &Server{}
	for _, c := range []struct {
		name, peer   string
		headers      []string // name, value pairs
		want, wantNo string   // with the proxies trusted; with none trusted
	}{
		{"no headers", "10.0.0.5:4000", nil, "10.0.0.5", "10.0.0.5"},
		{"xff from a trusted proxy", "10.0.0.5:4000", []string{"X-Forwarded-For", "203.0.113.7"}, "203.0.113.7", "10.0.0.5"},
		{"xff from an untrusted peer is ignored", "198.51.100.9:4000", []string{"X-Forwarded-For", "203.0.113.7"}, "198.51.100.9", "198.51.100.9"},
		{"a forged left part is skipped", "10.0.0.5:4000", []string{"X-Forwarded-For", "1.1.1.1, 203.0.113.7"}, "203.0.113.7", "10.0.0.5"},
		{"trusted hops are walked past", "10.0.0.5:4000", []string{"X-Forwarded-For", "1.1.1.1, 203.0.113.7, 10.9.9.9, 10.0.0.4"}, "203.0.113.7", "10.0.0.5"},
		{"several header lines are one chain", "10.0.0.5:4000", []string{"X-Forwarded-For", "1.1.1.1", "X-Forwarded-For", "203.0.113.7"}, "203.0.113.7", "10.0.0.5"},
		{"every hop trusted: the left-most", "10.0.0.5:4000", []string{"X-Forwarded-For", "10.1.1.1, 10.2.2.2"}, "10.1.1.1", "10.0.0.5"},
		{"garbage hop: the proxy", "10.0.0.5:4000", []string{"X-Forwarded-For", "203.0.113.7, unknown"}, "10.0.0.5", "10.0.0.5"},
		{"xff with a port", "10.0.0.5:4000", []string{"X-Forwarded-For", "203.0.113.7:5555"}, "203.0.113.7", "10.0.0.5"},
		{"forwarded", "10.0.0.5:4000", []string{"Forwarded", `for=192.0.2.60;proto=http;by=203.0.113.43`}, "192.0.2.60", "10.0.0.5"},
		{"forwarded ipv6 quoted with port", "10.0.0.5:4000", []string{"Forwarded", `for=192.0.2.1, For="[2001:db8:cafe::17]:4711"`}, "2001:db8:cafe::17", "10.0.0.5"},
		{"forwarded wins over xff", "10.0.0.5:4000", []string{"Forwarded", "for=192.0.2.60", "X-Forwarded-For", "203.0.113.7"}, "192.0.2.60", "10.0.0.5"},
		{"forwarded obfuscated: the proxy", "10.0.0.5:4000", []string{"Forwarded", "for=_hidden"}, "10.0.0.5", "10.0.0.5"},
		{"ipv6 proxy", "[fd00::1]:4000", []string{"X-Forwarded-For", "2001:db8::9"}, "2001:db8::9", "fd00::1"},
		{"ipv4-mapped peer", "[::ffff:10.0.0.5]:4000", []string{"X-Forwarded-For", "203.0.113.7"}, "203.0.113.7", "::ffff:10.0.0.5"},
		{"empty xff", "10.0.0.5:4000", []string{"X-Forwarded-For", ""}, "10.0.0.5", "10.0.0.5"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.peer
		for i := 0; i+1 < len(c.headers); i += 2 {
			r.Header.Add(c.headers[i], c.headers[i+1])
		}
		if got := trusting.clientAddr(r); got != c.want {
			t.Errorf("%s: trusted proxies: got %s, want %s", c.name, got, c.want)
		}
		if got := trustingNone.clientAddr(r); got != c.wantNo {
			t.Errorf("%s: no trusted proxies: got %s, want %s", c.name, got, c.wantNo)
		}
	}
}
