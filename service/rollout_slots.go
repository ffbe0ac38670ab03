package service

import (
	"crypto/sha256"
	"encoding/binary"
	"strconv"

	"github.com/voiceapi/voiceapi/data"
)

// A rollout's callers are hashed to data.RolloutSlots slots, and its slot map names the
// version each slot sends its callers to (conventions §23, docs/agents.md "Sticky"). A new
// rollout lays its slots out consecutively in list order; every later change of weights
// (a PUT, the automatic rollback) moves as few slots as it can (reslot), so a caller
// changes version only when theirs shrank or left.

// slotOf is a party's slot, 0 to 99: a hash of the agent, the rollout's start and the
// party, so it needs no storage, stays the same while the rollout stands, and is shuffled
// anew by a new rollout.
func slotOf(r *data.StoredRollout, party string) int {
	h := sha256.Sum256([]byte(r.AgentID + "\x00" + strconv.FormatInt(r.StartedAt.UnixMilli(), 10) + "\x00" + party))
	return int(binary.BigEndian.Uint64(h[:8]) % data.RolloutSlots)
}

// consecutiveSlots lays the variants out as a new rollout does: each owns consecutive
// slots in list order, as many as its weight.
func consecutiveSlots(variants []data.RolloutVariant) []int {
	slots := make([]int, 0, data.RolloutSlots)
	for _, v := range variants {
		for range v.Weight {
			slots = append(slots, v.Version)
		}
	}
	return slots
}

// slotsFit reports whether slots gives each variant exactly its weight of the slots (and
// so no slot to any other version).
func slotsFit(slots []int, variants []data.RolloutVariant) bool {
	if len(slots) != data.RolloutSlots {
		return false
	}
	held := map[int]int{}
	for _, version := range slots {
		held[version]++
	}
	for _, v := range variants {
		if held[v.Version] != v.Weight {
			return false
		}
	}
	return true
}

// slotsOf returns r's slot map. A rollout stored before the map existed has none, and one
// a binary without the map rewrote (a replica not yet upgraded) may hold one its weights
// no longer fit: both read as the consecutive layout, which is how such a binary assigns
// callers, so no caller moves on upgrade.
func slotsOf(r *data.StoredRollout) []int {
	if slotsFit(r.Slots, r.Variants) {
		return r.Slots
	}
	return consecutiveSlots(r.Variants)
}

// reslot returns the slot map of the variants' new weights over prev, a map of the old
// ones, moving as few slots as it can: each version keeps the slots it held, lowest first,
// up to its new weight; the rest (all of a version that left) are freed, and handed,
// lowest first, to the versions that grew, in list order. A slot whose version still has
// room never moves, so a caller changes version only when theirs shrank or left.
func reslot(prev []int, variants []data.RolloutVariant) []int {
	room := make(map[int]int, len(variants))
	for _, v := range variants {
		room[v.Version] = v.Weight
	}
	next := make([]int, len(prev))
	var freed []int
	for slot, version := range prev {
		if room[version] > 0 {
			next[slot] = version
			room[version]--
			continue
		}
		freed = append(freed, slot)
	}
	for _, v := range variants {
		for ; room[v.Version] > 0; room[v.Version]-- {
			next[freed[0]] = v.Version
			freed = freed[1:]
		}
	}
	return next
}

// nextSlots is the slot map of variants set over old: laid out consecutively for a new
// rollout (old nil), else moved as little as it can from old's (reslot).
func nextSlots(old *data.StoredRollout, variants []data.RolloutVariant) []int {
	if old == nil {
		return consecutiveSlots(variants)
	}
	return reslot(slotsOf(old), variants)
}

// variantFor returns the variant of r a party gets: the one its slot's version names.
func variantFor(r *data.StoredRollout, party string) data.RolloutVariant {
	version := slotsOf(r)[slotOf(r, party)]
	return r.Variants[variantIndex(&r.Rollout, version)]
}
