package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/voiceapi/voiceapi/netguard"
	"github.com/voiceapi/voiceapi/redact"
)

// errTimedOut is the cause of a completion's own deadline (Options.Timeout).
var errTimedOut = errors.New("the provider did not answer in time")

// statusError is a provider's answer that is not a success, caught before an SDK reads it,
// so every protocol's error body is read by one function (providerMessage).
type statusError struct {
	status int
	body   []byte
	// code is the provider's error code where it sends one apart from the body (AWS's
	// X-Amzn-ErrorType, an event stream's exception type); message, when set, is the
	// message already read.
	code    string
	message string
}

func (e *statusError) Error() string { return fmt.Sprintf("answered %d", e.status) }

// callbackError carries the error of onText through an SDK, to be returned as it is.
type callbackError struct{ err error }

func (e *callbackError) Error() string { return e.err.Error() }

// malformedError is an answer that came but cannot be read as the protocol's: not worth
// retrying, the same bytes would come again.
type malformedError struct{ msg string }

func (e *malformedError) Error() string { return e.msg }

// cutError is a reply that stopped before its end: cut, or ended by an error the provider
// sent in the stream. Worth retrying unless permanent (an exception such as a validation
// failure, which would come again).
type cutError struct {
	msg       string
	permanent bool
}

func (e *cutError) Error() string { return e.msg }

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// readStatusError reads a failed answer's body and closes it.
func readStatusError(res *http.Response) *statusError {
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	res.Body.Close()
	return &statusError{status: res.StatusCode, body: body}
}

// fail turns what went wrong during a completion into the error Complete returns: onText's
// own error as it is, the caller's cancellation as the context's error, anything else an
// *Error whose message holds no credential (b's, nor those in more).
func (b *base) fail(ctx context.Context, err error, more ...string) error {
	var cb *callbackError
	if errors.As(err, &cb) {
		return cb.err
	}
	if errors.Is(context.Cause(ctx), errTimedOut) || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Provider: b.provider, Message: "no answer in time", Timeout: true, Retryable: true}
	}
	if ctx.Err() != nil {
		return ctx.Err() // the caller gave up: not the provider's failure
	}
	e := &Error{Provider: b.provider}
	var se *statusError
	var me *malformedError
	var ce *cutError
	switch {
	case errors.As(err, &se):
		e.Status = se.status
		e.Message = se.message
		if e.Message == "" {
			e.Message = providerMessage(se.body, se.status)
		}
		if se.code != "" {
			e.Message = se.code + ": " + e.Message
		}
		e.Retryable = retryableStatus(se.status)
	case errors.As(err, &me):
		e.Message = "the answer could not be read: " + me.msg
	case errors.As(err, &ce):
		e.Message = ce.msg
		e.Retryable = !ce.permanent
	case cutConnection(err):
		e.Message = "the connection was cut before the reply was complete"
		e.Retryable = true
	default:
		e.Message = connectionMessage(err)
	}
	e.Message = b.scrub(clip(e.Message), more...)
	return e
}

// retryableStatus: timeouts, rate limits and the provider's own failures pass; the rest
// (a bad key, an unknown model, a refused request) would fail again.
func retryableStatus(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}

// cutConnection reports whether err is a connection closed under a request or reply.
func cutConnection(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// connectionMessage says why no answer came: the request's own error without the
// client's "Post URL:" wrapping, which adds nothing the provider name does not say.
func connectionMessage(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := "the request failed: " + err.Error()
	if errors.Is(err, netguard.ErrForbiddenAddress) {
		// The usual first-hour case: a model server on this machine or network. Whoever
		// reads this is told the one flag that opens it, and only it.
		msg += " (the server's guard against internal addresses; its operator lets a model server there through with serve --allow-url-prefix and the server's URL prefix, such as --allow-url-prefix http://127.0.0.1:11434/)"
	}
	return msg
}

// providerMessage finds the message in a provider's error body: OpenAI's, Groq's and
// Azure's {"error":{"message"}}, Ollama's {"error":"..."}, Mistral's {"message"} (a
// string, or a validation detail), FastAPI's {"detail"}, AWS's {"message"} or
// {"Message"}; else a short text body; else the status's name.
func providerMessage(body []byte, status int) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) == nil {
		if inner, ok := obj["error"]; ok {
			var nested map[string]json.RawMessage
			if json.Unmarshal(inner, &nested) == nil {
				obj = nested
			} else if s := jsonText(inner); s != "" {
				return s
			}
		}
		for _, key := range []string{"message", "Message", "detail"} {
			if s := jsonText(obj[key]); s != "" {
				return s
			}
		}
	}
	text := strings.TrimSpace(string(body))
	if text != "" && utf8.ValidString(text) && !strings.HasPrefix(text, "<") && !strings.HasPrefix(text, "{") {
		return strings.Join(strings.Fields(text), " ")
	}
	if name := http.StatusText(status); name != "" {
		return name
	}
	return fmt.Sprintf("status %d", status)
}

// jsonText renders a message member: a string as it is, a validation detail
// ({"detail":[{"loc":[...],"msg":"..."}]} or the list alone) as "loc: msg; ...".
func jsonText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	type item struct {
		Loc []any  `json:"loc"`
		Msg string `json:"msg"`
	}
	var details []item
	var wrapped struct {
		Detail []item `json:"detail"`
	}
	if json.Unmarshal(raw, &wrapped) == nil && len(wrapped.Detail) > 0 {
		details = wrapped.Detail
	} else if json.Unmarshal(raw, &details) != nil {
		details = nil
	}
	var parts []string
	for _, d := range details {
		loc := make([]string, len(d.Loc))
		for i, l := range d.Loc {
			loc[i] = fmt.Sprint(l)
		}
		parts = append(parts, strings.TrimPrefix(strings.Join(loc, "."), "body.")+": "+d.Msg)
	}
	return strings.Join(parts, "; ")
}

// maxMessage bounds a provider's message, in characters.
const maxMessage = 500

func clip(s string) string {
	if utf8.RuneCountInString(s) <= maxMessage {
		return s
	}
	return string([]rune(s)[:maxMessage]) + "…"
}

// scrub removes b's credentials, and more, from a message a provider wrote
// (redact.Secrets).
func (b *base) scrub(msg string, more ...string) string {
	return redact.Secrets(msg, append(slices.Clone(b.secrets), more...)...)
}
