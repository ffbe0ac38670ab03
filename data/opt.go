package data

// Opt is an optional field of an update body: Set tells whether the member was given. The
// strict decoder lets T decide whether null is taken: Opt[*string] is an optional, nullable
// field, where a given null (Set, V nil) differs from an absent member; Opt[string] refuses
// null. A map takes null as nil, so an Opt of a map that is not nullable is tagged
// strict:"nonnull".
type Opt[T any] struct {
	Set bool
	V   T
}

// Optional marks Opt for the strict decoder.
func (Opt[T]) Optional() {}

// Some returns an Opt that is set to v.
func Some[T any](v T) Opt[T] { return Opt[T]{Set: true, V: v} }
