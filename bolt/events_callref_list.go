package bolt

import (
	"encoding/binary"
	"errors"

	"github.com/voiceapi/voiceapi/data"
)

// A call's list of referencing events (bucketCallEventRefs). Schema 3 stored each id as
// a uvarint length and its text; from schema 4 a list of well-formed event ids is
// refListRaw and 16 raw bytes an id (33 bytes for a call's two events, not 62). An id's
// length is never 0, so no list of the old form starts with refListRaw: both read.
const refListRaw = 0x00

var errRefList = errors.New("its list of referencing events is malformed")

// appendRefList returns list with id added, in the raw form when every id allows it.
// Lists are short (a call's few events): they are rewritten whole.
func appendRefList(list []byte, id string) ([]byte, error) {
	ids, err := parseRefList(list)
	if err != nil {
		return nil, err
	}
	ids = append(ids, id)
	out := make([]byte, 1, 1+16*len(ids))
	for _, id := range ids {
		raw, ok := idRaw(data.PrefixEvent, id)
		if !ok {
			return appendRefListText(nil, ids), nil
		}
		out = append(out, raw[:]...)
	}
	return out, nil // out[0] is refListRaw
}

func appendRefListText(out []byte, ids []string) []byte {
	for _, id := range ids {
		out = binary.AppendUvarint(out, uint64(len(id)))
		out = append(out, id...)
	}
	return out
}

// parseRefList returns the ids of a list of either form.
func parseRefList(list []byte) ([]string, error) {
	var ids []string
	if len(list) > 0 && list[0] == refListRaw {
		if (len(list)-1)%16 != 0 {
			return nil, errRefList
		}
		for rest := list[1:]; len(rest) > 0; rest = rest[16:] {
			ids = append(ids, idText(data.PrefixEvent, rest[:16]))
		}
		return ids, nil
	}
	for rest := list; len(rest) > 0; {
		n, size := binary.Uvarint(rest)
		if size <= 0 || uint64(len(rest)-size) < n {
			return nil, errRefList
		}
		ids = append(ids, string(rest[size:size+int(n)]))
		rest = rest[size+int(n):]
	}
	return ids, nil
}
