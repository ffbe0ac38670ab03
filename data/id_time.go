package data

import (
	"strings"
	"time"
)

// IDTime returns the creation time (to the millisecond, UTC) an id made by IDGen carries
// in the ten characters after its prefix. A call's created_at is its id's time, so that
// a range of created_at is a range of ids.
func IDTime(prefix, id string) time.Time {
	var ms int64
	for _, c := range []byte(id[len(prefix) : len(prefix)+10]) {
		ms = ms<<5 | int64(strings.IndexByte(crockford, c))
	}
	return time.UnixMilli(ms).UTC()
}
