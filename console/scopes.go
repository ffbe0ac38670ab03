package console

import (
	"net/http"

	"github.com/voiceapi/voiceapi/data"
)

// heldScopes splits data.Scopes into those the signed-in user could give a key and those
// it could not, by the rule the API refuses a key's scopes by (data.GivesScope): a key
// never holds more than its user (docs/api.md, "Scoped API keys"), so a scope none of
// whose operations the user may perform would give it nothing, and the API refuses it.
func (h *Handler) heldScopes(r *http.Request) (held, withheld []string) {
	p := data.PrincipalFrom(r.Context())
	for _, sc := range data.Scopes {
		if p.GivesScope(sc) == nil {
			held = append(held, sc)
		} else {
			withheld = append(withheld, sc)
		}
	}
	return held, withheld
}
