package netguard

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// urlPrefix is an allowed URL prefix: a scheme, a host (with its port, if any) and a path
// prefix.
type urlPrefix struct {
	scheme, host, path string
}

// CheckURLPrefix validates an --allow-url-prefix value: an http or https URL with a host,
// no user, query or fragment, such as http://127.0.0.1:11434/ or
// http://models.internal/v1/.
func CheckURLPrefix(raw string) error {
	_, err := parseURLPrefix(raw)
	return err
}

func parseURLPrefix(raw string) (urlPrefix, error) {
	if err := CheckURL(raw); err != nil {
		return urlPrefix{}, err
	}
	u, _ := url.Parse(raw) // CheckURL parsed it
	if u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(raw, "?") || strings.HasSuffix(raw, "#") {
		return urlPrefix{}, errors.New("a URL prefix has no query or fragment")
	}
	if hasDotSegment(u.EscapedPath()) {
		return urlPrefix{}, errors.New("a URL prefix has no . or .. path segment")
	}
	return urlPrefix{scheme: u.Scheme, host: strings.ToLower(u.Host), path: u.EscapedPath()}, nil
}

// matches reports whether u starts with the prefix: the same scheme and host, and a path
// equal to the prefix's or under it (http://h/v1 covers /v1 and /v1/…, not /v1beta).
func (p urlPrefix) matches(u *url.URL) bool {
	if u.Scheme != p.scheme || strings.ToLower(u.Host) != p.host || u.User != nil {
		return false
	}
	path := u.EscapedPath()
	if hasDotSegment(path) {
		return false // /v1/../admin must not pass as /v1/
	}
	if p.path == "" || p.path == "/" {
		return true
	}
	dir := p.path
	if !strings.HasSuffix(dir, "/") {
		if path == p.path {
			return true
		}
		dir += "/"
	}
	return strings.HasPrefix(path, dir)
}

// hasDotSegment reports a "." or ".." path segment as a server may read the escaped path:
// percent-decoded (%2e is ".", %2f is "/", in either case), a backslash taken as a slash,
// and a segment's ";parameters" dropped (Tomcat reads "..;" as ".."). A path that cannot
// be decoded counts as one too: no server should be trusted to read it inside the prefix.
func hasDotSegment(escaped string) bool {
	path, err := url.PathUnescape(escaped)
	if err != nil {
		return true
	}
	for seg := range strings.SplitSeq(strings.ReplaceAll(path, `\`, "/"), "/") {
		seg, _, _ = strings.Cut(seg, ";")
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// prefixRouter sends a request whose URL has an allowed prefix through the open transport
// and every other through the guarded one; each redirect hop is routed anew.
type prefixRouter struct {
	guarded, open http.RoundTripper
	prefixes      []urlPrefix
}

func (r prefixRouter) RoundTrip(req *http.Request) (*http.Response, error) {
	for _, p := range r.prefixes {
		if p.matches(req.URL) {
			return r.open.RoundTrip(req)
		}
	}
	return r.guarded.RoundTrip(req)
}
