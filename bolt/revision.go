package bolt

import "hash/maphash"

// revisionSeed seeds the fingerprints of stored rows; caches live no longer than the
// process, so a per-process seed is enough.
var revisionSeed = maphash.MakeSeed()

// revision fingerprints a stored row without decoding it: a cache whose entry was made
// from a row with this fingerprint is current. 0 means no row.
func revision(raw []byte) uint64 {
	if raw == nil {
		return 0
	}
	if h := maphash.Bytes(revisionSeed, raw); h != 0 {
		return h
	}
	return 1
}
