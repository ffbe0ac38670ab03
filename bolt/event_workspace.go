package bolt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/voiceapi/voiceapi/service"
)

var _ service.EventWorkspaceTx = tx{}

// EventWorkspace implements service.EventWorkspaceTx. A stored event's members come in
// data.Event's order, workspace_id before the payload (data.Event.AppendJSON, and
// encoding/json for events written before it), so the value is inflated only up to that
// member, a few hundred bytes of a payload of kilobytes. A value in another order still
// reads, in full. An event stored as a reference is read from its envelope; one in the
// binary form (events_binary.go) holds the workspace at a fixed offset.
func (t tx) EventWorkspace(id string) (string, error) {
	v := t.b.Bucket(bucketEvents).Get([]byte(id))
	if v == nil {
		return "", nil
	}
	if isBinaryEvent(v) {
		ws, err := binaryEventWorkspace(v)
		if err != nil {
			return "", fmt.Errorf("event %s: %w", id, err)
		}
		return ws, nil
	}
	if len(v) > 0 && (v[0] == markEventRef || v[0] == markCallRef) {
		// A reference (events_ref.go): its envelope, stored as any value, holds the
		// workspace; the payload it points to does not matter here.
		_, env, err := splitEventRef(v)
		if err != nil {
			return "", fmt.Errorf("event %s: %w", id, err)
		}
		v = env
	}
	if !deflated(v) {
		ws, _, err := topLevelString(v, "workspace_id", true)
		return ws, err
	}
	r, release, err := inflating(v)
	if err != nil {
		return "", err
	}
	defer release()
	buf := inflateBufs.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledInflate {
			inflateBufs.Put(buf)
		}
	}()
	buf.Reset()
	for {
		_, err := io.CopyN(buf, r, 256)
		eof := err == io.EOF
		if err != nil && !eof {
			return "", fmt.Errorf("inflating event %s: %w", id, err)
		}
		ws, ok, err := topLevelString(buf.Bytes(), "workspace_id", eof)
		if ok || err != nil {
			return ws, err
		}
		if eof {
			return "", fmt.Errorf("event %s: truncated", id)
		}
	}
}

// topLevelString finds the member name of the JSON object at the start of b and returns
// its string value. ok is false when b ends before the scan could tell (more is needed);
// when complete says b is the whole value, a missing member is ok with "".
func topLevelString(b []byte, name string, complete bool) (value string, ok bool, err error) {
	i := skipSpace(b, 0)
	if i >= len(b) {
		return "", complete, nil
	}
	if b[i] != '{' {
		return "", false, errors.New("stored event is not a JSON object")
	}
	i++
	for {
		i = skipSpace(b, i)
		if i >= len(b) {
			return "", false, nil
		}
		switch b[i] {
		case '}':
			return "", true, nil
		case ',':
			i++
			continue
		}
		end := valueEnd(b, i)
		if end < 0 {
			return "", false, nil
		}
		key := b[i:end]
		i = skipSpace(b, end)
		if i >= len(b) {
			return "", false, nil
		}
		i = skipSpace(b, i+1) // the colon
		vend := valueEnd(b, i)
		if vend < 0 {
			return "", false, nil
		}
		if string(key) == `"`+name+`"` {
			var s string
			if err := json.Unmarshal(b[i:vend], &s); err != nil {
				return "", false, err
			}
			return s, true, nil
		}
		i = vend
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// valueEnd returns the end of the JSON value starting at b[i], or -1 when b ends first.
// It trusts the value to be valid JSON (it was written by this program).
func valueEnd(b []byte, i int) int {
	depth, inString := 0, false
	for j := i; j < len(b); j++ {
		c := b[j]
		switch {
		case inString:
			if c == '\\' {
				j++
			} else if c == '"' {
				inString = false
				if depth == 0 {
					return j + 1
				}
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return j + 1
			}
			if depth < 0 { // the end of an enclosing object: a literal ended
				return j
			}
		case depth == 0 && (c == ',' || c == ' ' || c == '\n' || c == '\t' || c == '\r'):
			return j
		}
	}
	return -1
}
