package knowledge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxJSONDepth bounds nesting so a hostile file cannot exhaust the stack.
const maxJSONDepth = 200

// extractJSON flattens every leaf into a line "path: value" in document order, e.g.
// "plans[1].price: 49". Keys give the values their meaning, which a bare value list loses.
func extractJSON(content []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(content))
	dec.UseNumber()
	var b limitedBuilder
	if err := walkJSON(dec, "", 0, &b); err != nil {
		return "", fmt.Errorf("cannot read the json file: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", fmt.Errorf("cannot read the json file: data after the top-level value")
	}
	if b.full {
		return "", fmt.Errorf("cannot read the json file: %w", errTooMuchText)
	}
	return b.String(), nil
}

func walkJSON(dec *json.Decoder, path string, depth int, b *limitedBuilder) error {
	if depth > maxJSONDepth {
		return fmt.Errorf("nested deeper than %d levels", maxJSONDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := kt.(string)
				child := key
				if path != "" {
					child = path + "." + key
				}
				if err := walkJSON(dec, child, depth+1, b); err != nil {
					return err
				}
			}
		case '[':
			for i := 0; dec.More(); i++ {
				if err := walkJSON(dec, path+"["+strconv.Itoa(i)+"]", depth+1, b); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("unexpected %v", t)
		}
		_, err := dec.Token() // the closing delimiter
		return err
	case string:
		writeLeaf(b, path, strings.TrimSpace(t))
	case json.Number:
		writeLeaf(b, path, t.String())
	case bool:
		writeLeaf(b, path, strconv.FormatBool(t))
	case nil:
		// null carries no information worth retrieving
	}
	return nil
}

func writeLeaf(b *limitedBuilder, path, value string) {
	if value == "" {
		return
	}
	if path != "" {
		b.WriteString(path)
		b.WriteString(": ")
	}
	b.WriteString(value)
	b.WriteString("\n")
}
