package validate

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/voiceapi/voiceapi/data"
)

// Bounds of a webhook (conventions §14).
const (
	MaxWebhookURLLen = 2048
	MaxWebhookEvents = 100
)

// WebhookURL checks a webhook URL's form as the outbound guard does (netguard.CheckURL):
// absolute, http or https, a host, no user:password, a valid port, at most 2048
// characters. Whether the host resolves to an internal address is checked when
// connecting, not here.
func WebhookURL(errs *Errors, path, raw string) {
	if strings.TrimSpace(raw) == "" {
		errs.NotBlank(path, raw)
		return
	}
	if utf8.RuneCountInString(raw) > MaxWebhookURLLen {
		errs.Addf(path, "The %s field must not be greater than %d characters.", path, MaxWebhookURLLen)
		return
	}
	if reason := urlFault(raw); reason != "" {
		errs.Addf(path, "The %s field must be a valid URL: %s.", path, reason)
	}
}

func urlFault(raw string) string {
	// Unicode spaces at either end too (U+00A0, U+0085): the guard refuses them.
	if strings.TrimSpace(raw) != raw || strings.ContainsAny(raw, " \t\r\n") {
		return "it contains whitespace"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "it cannot be parsed"
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "it must start with http:// or https://"
	case u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return "it must name a host"
	case u.User != nil:
		return "it must not contain a user name or password"
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Sprintf("the port %q is invalid", p)
		}
	}
	return ""
}

// webhookEvents checks an events filter: a non-empty list of known types, or ["*"].
func webhookEvents(errs *Errors, path string, list []string) {
	if len(list) == 0 {
		errs.Addf(path, "The %s field must list at least one event type, or \"*\" for all.", path)
		return
	}
	errs.MaxItems(path, len(list), MaxWebhookEvents)
	seen := map[string]bool{}
	for i, e := range list {
		p := Index(path, i)
		switch {
		case e == data.WebhookAllEvents && len(list) > 1:
			errs.Addf(p, "The %s field \"*\" already means every event; it must be alone.", p)
		case e != data.WebhookAllEvents && !knownEventType(e):
			errs.Addf(p, "The selected %s is invalid; it must be an event type (see docs/webhooks.md) or \"*\".", p)
		case seen[e]:
			errs.Addf(p, "The %s field has a duplicate value.", p)
		}
		seen[e] = true
	}
}

func knownEventType(t string) bool {
	for _, k := range data.EventTypes {
		if k == t {
			return true
		}
	}
	return false
}

// webhookURL is WebhookURL and then, when the form passed, the outbound guard checkURL.
func webhookURL(errs *Errors, path, raw string, checkURL func(string) error) {
	WebhookURL(errs, path, raw)
	if errs.Has(path) {
		return
	}
	if err := checkURL(raw); err != nil {
		errs.Addf(path, "The %s field is not an acceptable URL: %v.", path, err)
	}
}

// WebhookCreate checks a new webhook; checkURL is the outbound guard's URL check.
func WebhookCreate(in data.WebhookCreate, checkURL func(string) error) error {
	var errs Errors
	webhookURL(&errs, "url", in.URL, checkURL)
	if in.Events == nil {
		errs.Required("events")
	} else {
		webhookEvents(&errs, "events", in.Events)
	}
	errs.MaxLen("description", in.Description, MaxDescriptionLen)
	return errs.Err()
}

// WebhookUpdate checks a webhook change; checkURL is the outbound guard's URL check.
func WebhookUpdate(in data.WebhookUpdate, checkURL func(string) error) error {
	var errs Errors
	if in.URL.Set {
		webhookURL(&errs, "url", in.URL.V, checkURL)
	}
	if in.Events.Set {
		webhookEvents(&errs, "events", in.Events.V)
	}
	if in.Description.Set {
		errs.MaxLen("description", in.Description.V, MaxDescriptionLen)
	}
	return errs.Err()
}

// WebhookReplay checks a replay range: both bounds, from before to.
func WebhookReplay(in data.WebhookReplay) error {
	var errs Errors
	if in.From.IsZero() {
		errs.Required("from")
	}
	if in.To.IsZero() {
		errs.Required("to")
	}
	if !in.From.IsZero() && !in.To.IsZero() && !in.From.Before(in.To.Time) {
		errs.Add("to", "The to field must be a time after from.")
	}
	return errs.Err()
}

// AuditFilter checks the audit log's query filters.
func AuditFilter(f data.AuditFilter) error {
	var errs Errors
	if f.Type != "" && !knownEventType(f.Type) {
		errs.Add("type", "The selected type is invalid; it must be an event type (see docs/webhooks.md).")
	}
	if f.Actor != "" && !data.ValidID(data.PrefixUser, f.Actor) {
		errs.Add("actor", "The actor field must be a user id.")
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To.Time) {
		errs.Add("to", "The to field must be a time after from.")
	}
	return errs.Err()
}
