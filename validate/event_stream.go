package validate

// EventStreamTypes checks the types= filter of the live event stream: each must be an
// event type. One message names the first unknown one, so a long list of typos stays one
// short answer.
func EventStreamTypes(types []string) error {
	var errs Errors
	for _, t := range types {
		if !knownEventType(t) {
			errs.Addf("types", "The types field holds %q, which is not an event type (see docs/events.md).", clip(t, 64))
			break
		}
	}
	return errs.Err()
}

// clip shortens s to at most n bytes for quoting in a message, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
