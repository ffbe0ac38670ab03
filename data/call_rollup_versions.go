package data

import (
	"strconv"
	"strings"
)

// Per-version counts of an agent's rollups (analytics split by agent_version, conventions
// §23). They are one flat map of counts, CallRollup.Versions, keyed "<version>|<kind>"
// ("" for calls without a version): kinds c, e, f, d and n are Calls, Ended, Failed,
// DurationMS and WithDuration, and "r|<reason>" counts a disconnection_reason. A flat map
// of counts adds and subtracts as the reasons do, on both engines, with no schema of its
// own; only an agent's rollups carry it (versions are numbered per agent).

// Version count kinds.
const (
	versionCalls        = "c"
	versionEnded        = "e"
	versionFailed       = "f"
	versionDuration     = "d"
	versionWithDuration = "n"
	versionReason       = "r|"
)

// versionCounts is r spread under version's keys.
func versionCounts(version string, r CallRollup) map[string]int64 {
	out := map[string]int64{}
	put := func(kind string, n int64) {
		if n != 0 {
			out[version+"|"+kind] = n
		}
	}
	put(versionCalls, r.Calls)
	put(versionEnded, r.Ended)
	put(versionFailed, r.Failed)
	put(versionDuration, r.DurationMS)
	put(versionWithDuration, r.WithDuration)
	for reason, n := range r.Reasons {
		put(versionReason+reason, n)
	}
	return out
}

// VersionKey is the key part of a version in CallRollup.Versions: its number, "" for none.
func VersionKey(version *int) string {
	if version == nil {
		return ""
	}
	return strconv.Itoa(*version)
}

// ForVersions returns what counts holds (CallRollup.Versions or CallBucket.Versions) as a
// rollup per version key.
func ForVersions(counts map[string]int64) map[string]CallRollup {
	out := map[string]CallRollup{}
	for k, n := range counts {
		version, kind, ok := strings.Cut(k, "|")
		if !ok {
			continue
		}
		r := out[version]
		switch {
		case kind == versionCalls:
			r.Calls += n
		case kind == versionEnded:
			r.Ended += n
		case kind == versionFailed:
			r.Failed += n
		case kind == versionDuration:
			r.DurationMS += n
		case kind == versionWithDuration:
			r.WithDuration += n
		case strings.HasPrefix(kind, versionReason):
			if r.Reasons == nil {
				r.Reasons = map[string]int64{}
			}
			r.Reasons[strings.TrimPrefix(kind, versionReason)] += n
		}
		out[version] = r
	}
	return out
}

// WithoutVersions is r without its per-version counts: a workspace's rollup.
func (r CallRollup) WithoutVersions() CallRollup {
	r.Versions = nil
	return r
}
