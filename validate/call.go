package validate

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/voiceapi/voiceapi/data"
)

// Bounds of a call record (docs/calls.md). The transcript limits keep one call well under
// the 1 MiB body limit and bound what a page of calls costs to read.
const (
	MaxTranscriptItems   = 2000
	MaxTranscriptContent = 10000   // characters of one item
	MaxTranscriptBytes   = 1 << 20 // bytes of all contents together
	MaxTranscriptStartMS = 86_400_000
	MaxCallDurationMS    = 86_400_000
	MaxObjectBytes       = 64 << 10 // variables, analysis, metadata, each encoded
	MaxObjectDepth       = 32       // levels of nesting of those objects, the object itself the first
	MaxReasonLen         = 100
	MaxURLLen            = 2048
	MaxSIPLen            = 255 // characters of a SIP URI
)

// sipURI is a SIP or SIPS address such as sip:alice@example.com.
var sipURI = regexp.MustCompile(`^sips?:[^\s@]+@[^\s@]+$`)

func callNumber(errs *Errors, path string, s *string) {
	if s == nil {
		return
	}
	// Characters, as docs/calls.md states the bound (sipURI lets a user part be UTF-8).
	if E164(*s) || utf8.RuneCountInString(*s) <= MaxSIPLen && sipURI.MatchString(*s) {
		return
	}
	errs.Addf(path, "The %s field must be an E.164 number such as +14155550123 or a SIP URI of at most %d characters such as sip:alice@example.com.", path, MaxSIPLen)
}

func transcript(errs *Errors, items []data.TranscriptItem) {
	if len(items) > MaxTranscriptItems {
		errs.MaxItems("transcript", len(items), MaxTranscriptItems)
		return
	}
	total := 0
	for i, it := range items {
		p := Index("transcript", i)
		if it.Role == "" {
			errs.Required(p + ".role")
		} else {
			errs.OneOf(p+".role", it.Role, data.TranscriptRoles...)
		}
		errs.MaxLen(p+".content", it.Content, MaxTranscriptContent)
		errs.IntBetween(p+".start_ms", it.StartMS, 0, MaxTranscriptStartMS)
		total += len(it.Content)
	}
	if total > MaxTranscriptBytes {
		errs.Addf("transcript", "The transcript field's contents must not be greater than %d bytes together.", MaxTranscriptBytes)
	}
}

func object(errs *Errors, path string, m map[string]any) {
	if m == nil {
		return
	}
	if deeperThan(m, MaxObjectDepth) {
		errs.Addf(path, "The %s field must not be nested more than %d levels deep.", path, MaxObjectDepth)
		return
	}
	b, _ := json.Marshal(m)
	if len(b) > MaxObjectBytes {
		errs.Addf(path, "The %s field must not be greater than %d bytes encoded.", path, MaxObjectBytes)
	}
}

// deeperThan reports whether v, a decoded JSON value, nests objects and arrays more than
// levels deep (an object or array is one level, a scalar none). It stops looking below
// levels, so a value nested thousands deep costs no more than one at the bound.
func deeperThan(v any, levels int) bool {
	switch x := v.(type) {
	case map[string]any:
		if levels == 0 {
			return true
		}
		for _, e := range x {
			if deeperThan(e, levels-1) {
				return true
			}
		}
	case []any:
		if levels == 0 {
			return true
		}
		for _, e := range x {
			if deeperThan(e, levels-1) {
				return true
			}
		}
	}
	return false
}

func reason(errs *Errors, s string) {
	errs.NotBlank("disconnection_reason", s)
	errs.MaxLen("disconnection_reason", s, MaxReasonLen)
}

func recordingURL(errs *Errors, s string) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil ||
		!uriChars(s) || utf8.RuneCountInString(s) > MaxURLLen {
		errs.Addf("recording_url", "The recording_url field must be an http or https URL of at most %d characters (RFC 3986: no spaces or markup; escape other characters with %%XX).", MaxURLLen)
	}
}

// uriChars reports whether s holds only what RFC 3986 allows in a URI: unreserved and
// reserved characters, and % followed by two hex digits. Spaces, quotes, angle brackets
// and every other character must arrive percent-encoded, so the URL is safe to print in a
// page or a CSV cell as it is.
func uriChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-._~:/?#[]@!$&'()*+,;=", c) >= 0:
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			i += 2
		default:
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// CallCreate checks a call the voice runtime registers. The agent and number are looked up
// in the write transaction.
func CallCreate(in data.CallCreate) error {
	var errs Errors
	if in.AgentID == "" {
		errs.Required("agent_id")
	} else if !data.ValidID(data.PrefixAgent, in.AgentID) {
		errs.Add("agent_id", "The agent_id field must be an agent of this workspace.")
	}
	if in.AgentVersion != nil {
		errs.IntMin("agent_version", int64(*in.AgentVersion), 1)
	}
	if in.NumberID != nil && !data.ValidID(data.PrefixNumber, *in.NumberID) {
		errs.Add("number_id", "The number_id field must be a number of this workspace.")
	}
	if in.Direction == "" {
		errs.Required("direction")
	} else {
		errs.OneOf("direction", in.Direction, data.CallDirections...)
	}
	callNumber(&errs, "from_number", in.FromNumber)
	callNumber(&errs, "to_number", in.ToNumber)
	if in.Direction == data.DirectionInbound || in.Direction == data.DirectionOutbound {
		if in.FromNumber == nil {
			errs.RequiredWhen("from_number", "direction is "+in.Direction)
		}
		if in.ToNumber == nil {
			errs.RequiredWhen("to_number", "direction is "+in.Direction)
		}
	}
	status := data.CallRegistered
	if in.Status != nil {
		status = *in.Status
		errs.OneOf("status", status, data.CallStatuses...)
	}
	if in.DurationMS != nil {
		errs.IntBetween("duration_ms", *in.DurationMS, 0, MaxCallDurationMS)
	}
	if in.DisconnectionReason != nil {
		reason(&errs, *in.DisconnectionReason)
	}
	if in.RecordingURL != nil {
		recordingURL(&errs, *in.RecordingURL)
	}
	transcript(&errs, in.Transcript)
	object(&errs, "variables", in.Variables)
	object(&errs, "analysis", in.Analysis)
	object(&errs, "metadata", in.Metadata)
	CallUsage(&errs, "usage", in.Usage)
	if !errs.Has("status") {
		CallCourse(&errs, status, in.StartedAt, in.EndedAt, in.DurationMS)
	}
	return errs.Err()
}

// CallCourse checks that the timestamps fit the status: a registered call has not started,
// only a finished call has ended_at or duration_ms, and a call does not end before it starts.
func CallCourse(errs *Errors, status string, started, ended *data.Time, duration *int64) {
	if status == data.CallRegistered && started != nil {
		errs.Prohibited("started_at", "status is registered")
	}
	if !data.CallFinal(status) {
		if ended != nil {
			errs.Prohibited("ended_at", "status is "+status)
		}
		if duration != nil {
			errs.Prohibited("duration_ms", "status is "+status)
		}
	}
	if started != nil && ended != nil && ended.Before(started.Time) {
		errs.Add("ended_at", "The ended_at field must not be before started_at.")
	}
}

// CallUpdate checks the members of a call update one by one; the state machine and the
// course of the merged record are checked against the stored call.
func CallUpdate(in data.CallUpdate) error {
	var errs Errors
	if in.Status.Set {
		errs.OneOf("status", in.Status.V, data.CallStatuses...)
	}
	if in.DurationMS.Set {
		errs.IntBetween("duration_ms", in.DurationMS.V, 0, MaxCallDurationMS)
	}
	if in.DisconnectionReason.Set {
		reason(&errs, in.DisconnectionReason.V)
	}
	if in.RecordingURL.Set {
		recordingURL(&errs, in.RecordingURL.V)
	}
	if in.Transcript.Set {
		transcript(&errs, in.Transcript.V)
	}
	if in.Variables.Set {
		object(&errs, "variables", in.Variables.V)
	}
	if in.Analysis.Set {
		object(&errs, "analysis", in.Analysis.V)
	}
	if in.Metadata.Set {
		object(&errs, "metadata", in.Metadata.V)
	}
	if in.Usage.Set {
		CallUsage(&errs, "usage", in.Usage.V)
	}
	return errs.Err()
}
