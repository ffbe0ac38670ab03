package conversation

import (
	"bytes"
	"slices"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// minEchoedSecret is the shortest credential value looked for in an answer: a shorter one
// would match ordinary text (a 4-letter token is in many words), and is too weak to guard.
const minEchoedSecret = 8

// echoedSecrets are the values of t's credential headers (as sent, variables substituted)
// an answer must not show, the longest first: each whole value, and the token of an
// "<scheme> <token>" value alone. An endpoint that echoes its request (a mirror or debug
// service, an error page quoting the headers) would otherwise hand the secret to the
// model, which may say it, and to the transcript every reader of the call sees, where
// answers show the header masked (docs/agents.md).
func echoedSecrets(t *data.Tool) []string {
	var secrets []string
	for _, item := range t.CustomFunctionHeaders {
		if !data.IsCredentialHeader(item) {
			continue
		}
		_, value, _ := data.SplitHeader(item)
		if _, token, ok := strings.Cut(value, " "); ok && len(strings.TrimSpace(token)) >= minEchoedSecret {
			secrets = append(secrets, strings.TrimSpace(token))
		}
		if len(value) >= minEchoedSecret {
			secrets = append(secrets, value)
		}
	}
	// The longest first, so a whole "Bearer <token>" is masked before its token alone.
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	return secrets
}

// maskSecrets returns body with each of secrets replaced by its mask (data.MaskSecret, as
// the header is shown); body is not changed in place.
func maskSecrets(body []byte, secrets []string) []byte {
	for _, s := range secrets {
		if bytes.Contains(body, []byte(s)) {
			body = bytes.ReplaceAll(body, []byte(s), []byte(data.MaskSecret(s)))
		}
	}
	return body
}
