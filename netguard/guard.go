package netguard

import (
	"fmt"
	"net/http"
	"slices"
)

// Guard is the operator's SSRF guard configuration (--allow-private-urls,
// --allow-url-prefix). serve builds one, and every client of a URL the server calls
// (webhooks, knowledge base urls, workspaces' embedding providers, model servers, custom
// functions) is made from it, so no channel is guarded otherwise than the others.
type Guard struct {
	// AllowPrivate lifts the address check for every URL.
	AllowPrivate bool
	// AllowURLPrefixes lift it for URLs under them only.
	AllowURLPrefixes []string
}

// NewGuard checks each prefix (CheckURLPrefix) and returns the guard.
func NewGuard(allowPrivate bool, prefixes []string) (Guard, error) {
	for _, p := range prefixes {
		if err := CheckURLPrefix(p); err != nil {
			return Guard{}, fmt.Errorf("--allow-url-prefix %q: %w", p, err)
		}
	}
	return Guard{AllowPrivate: allowPrivate, AllowURLPrefixes: slices.Clone(prefixes)}, nil
}

// Client is NewClient with opts' settings and the guard's allowances.
func (g Guard) Client(opts Options) *http.Client {
	opts.AllowPrivate, opts.AllowURLPrefixes = g.AllowPrivate, g.AllowURLPrefixes
	return NewClient(opts)
}
