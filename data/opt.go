package data

// Opt is an optional, non-nullable field of an update body: Set tells whether the member
// was given. The strict decoder fills it and refuses null for it (conventions §1).
type Opt[T any] struct {
	Set bool
	V   T
}

// Optional marks Opt for the strict decoder.
func (Opt[T]) Optional() {}

// Some returns an Opt that is set to v.
func Some[T any](v T) Opt[T] { return Opt[T]{Set: true, V: v} }
