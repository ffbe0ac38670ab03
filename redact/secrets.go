package redact

import (
	"regexp"
	"strings"
)

// secretRedacted replaces what Secrets removes.
const secretRedacted = "[redacted]"

// keyLike is a run of characters a key is made of, long enough to hold part of one.
var keyLike = regexp.MustCompile(`[A-Za-z0-9_\-+/=.*:]{6,}`)

// Secrets removes secrets from a message a remote server wrote (a provider's error, which
// voiceapi keeps and shows). Providers echo keys in whole ("Incorrect API key provided:
// sk-...") or masked in the middle ("sk-ab***wxyz"): a run of key characters that holds
// any six characters of a secret in a row, or a masked run that starts or ends like one,
// goes too.
func Secrets(msg string, secrets ...string) string {
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, secretRedacted)
		}
	}
	return keyLike.ReplaceAllStringFunc(msg, func(run string) string {
		for _, s := range secrets {
			if revealsPart(run, s) {
				return secretRedacted
			}
		}
		return run
	})
}

// revealsPart reports whether run shows enough of secret to narrow it down.
func revealsPart(run, secret string) bool {
	const window, ends = 6, 4
	if len(secret) < window {
		return false
	}
	for i := 0; i+window <= len(secret); i++ {
		if strings.Contains(run, secret[i:i+window]) {
			return true
		}
	}
	trimmed := strings.TrimRight(run, ".:")
	return strings.Contains(run, "**") &&
		(strings.HasPrefix(run, secret[:ends]) || strings.HasSuffix(trimmed, secret[len(secret)-ends:]))
}
