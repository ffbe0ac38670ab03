package validate

import (
	"net/url"
	"strings"

	"github.com/voiceapi/voiceapi/netguard"
)

// KeptCredentialMoved reports the fault of a stored credential kept (sent back masked, or
// not sent) while the address it is sent to changes: a member who may edit a provider's
// address but never read its key could otherwise point the address at a server of theirs
// and receive the key with the next request. The key must be given again with the new
// address; a path, model or deployment change on the same origin keeps it. path is the
// api_key field's path; before and after are ProviderAddress values.
func KeptCredentialMoved(errs *Errors, path string, kept bool, before, after string) {
	if kept && before != after {
		errs.Addf(path, "The %s field must be given again when the provider's address changes: the stored key is sent only where it was entered.", path)
	}
}

// ProviderAddress is where a model or embeddings provider's requests go, for
// KeptCredentialMoved: the provider, the origin (scheme, host, port) of each URL, and the
// region, which names the host of a cloud provider.
func ProviderAddress(provider, region string, urls ...string) string {
	parts := []string{provider, region}
	for _, u := range urls {
		parts = append(parts, origin(u))
	}
	return strings.Join(parts, "\x00")
}

// origin is raw's (netguard.Origin); a URL that does not parse is its own origin.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	return netguard.Origin(u)
}
