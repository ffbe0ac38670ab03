package data

import (
	"encoding/binary"
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

// IDFloor returns the smallest id of prefix that IDGen can make at t's millisecond: every
// id made earlier sorts before it, every id made at t or later sorts at or after it. A
// storage engine walks time-ordered keys up to a time with it.
func IDFloor(prefix string, t time.Time) string {
	ms := uint64(max(t.UnixMilli(), 0))
	var raw [16]byte
	binary.BigEndian.PutUint64(raw[:8], ms<<16)
	return prefix + encodeBase32(raw)
}

// IDBound returns the smallest id with prefix created at or after t: every id created at
// or after t sorts at or after it, every id created before t sorts before it. Ids carry
// milliseconds, so a t between two milliseconds rounds up (where IDFloor rounds down).
// The storage engines bound ranges of created_at with it.
func IDBound(prefix string, t time.Time) string {
	ms := uint64(t.UnixMilli())
	if t.Nanosecond()%int(time.Millisecond) != 0 {
		ms++
	}
	var out [10]byte
	for i := 9; i >= 0; i-- {
		out[i] = crockford[ms&31]
		ms >>= 5
	}
	return prefix + string(out[:]) + "0000000000000000"
}
