// Package ssetest is an independent reading of text/event-stream for tests: the oracle
// the server's stream writer and the Go client's stream reader are fuzzed against.
package ssetest

import "strings"

// Event is one event as a browser's EventSource dispatches it.
type Event struct{ ID, Type, Data string }

// Parse reads a text/event-stream as the WHATWG HTML standard's "Interpreting an event
// stream" says: UTF-8 with replacement, one leading BOM dropped, lines ended by CRLF, LF
// or CR, one space after the colon dropped, an id holding NUL ignored, the data's last LF
// removed, an event with no data not dispatched, an incomplete event at the end dropped.
// lastEventID is the source's last event ID string at the end: the id buffer as the last
// blank line found it, whether or not that message was dispatched.
func Parse(stream []byte) (events []Event, lastEventID string) {
	return ParseFrom(stream, "")
}

// ParseFrom is Parse for a stream opened with the last event ID resume (the id buffer's
// first value).
func ParseFrom(stream []byte, resume string) (events []Event, lastEventID string) {
	text := strings.ToValidUTF8(string(stream), "\uFFFD")
	text = strings.TrimPrefix(text, "\uFEFF")
	var typ string
	idBuffer, lastEventID := resume, resume
	var buf strings.Builder
	hasData := false
	for len(text) > 0 {
		end := strings.IndexAny(text, "\r\n")
		if end < 0 {
			break // no line end: the event is incomplete
		}
		line := text[:end]
		if text[end] == '\r' && end+1 < len(text) && text[end+1] == '\n' {
			end++
		}
		text = text[end+1:]
		if line == "" {
			lastEventID = idBuffer
			if hasData {
				t := typ
				if t == "" {
					t = "message"
				}
				events = append(events, Event{ID: idBuffer, Type: t, Data: strings.TrimSuffix(buf.String(), "\n")})
			}
			typ, hasData = "", false
			buf.Reset()
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			typ = value
		case "data":
			buf.WriteString(value + "\n")
			hasData = true
		case "id":
			if !strings.ContainsRune(value, 0) {
				idBuffer = value
			}
		}
	}
	return events, lastEventID
}
